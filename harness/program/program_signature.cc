#include "harness/program/program_signature.h"

#include "harness/util/errors.h"
#include "harness/util/json_util.h"

namespace aoti {

std::string DeviceNameFromSchema(const nlohmann::json& device, const std::string& what) {
  if (!device.is_object() || !device.contains("type") || !device.at("type").is_string()) {
    throw HarnessError(what + ": malformed device " + device.dump() + "; expected {\"type\": ..., \"index\": ...}");
  }
  std::string name = device.at("type").get<std::string>();
  if (device.contains("index") && device.at("index").is_number()) {
    name += ":" + std::to_string(JsonInt32(device.at("index"), what + " device index"));
  }
  return name;
}

c10::ScalarType ScalarTypeFromSchema(int code, const std::string& what) {
  switch (code) {
    case 1: return c10::ScalarType::Byte;
    case 2: return c10::ScalarType::Char;
    case 3: return c10::ScalarType::Short;
    case 4: return c10::ScalarType::Int;
    case 5: return c10::ScalarType::Long;
    case 6: return c10::ScalarType::Half;
    case 7: return c10::ScalarType::Float;
    case 8: return c10::ScalarType::Double;
    case 9: return c10::ScalarType::ComplexHalf;
    case 10: return c10::ScalarType::ComplexFloat;
    case 11: return c10::ScalarType::ComplexDouble;
    case 12: return c10::ScalarType::Bool;
    case 13: return c10::ScalarType::BFloat16;
    case 28: return c10::ScalarType::UInt16;
    case 29: return c10::ScalarType::Float8_e4m3fn;
    case 30: return c10::ScalarType::Float8_e5m2;
    case 31: return c10::ScalarType::Float8_e4m3fnuz;
    case 32: return c10::ScalarType::Float8_e5m2fnuz;
    case 33: return c10::ScalarType::Float8_e8m0fnu;
    case 34: return c10::ScalarType::UInt32;
    case 35: return c10::ScalarType::UInt64;
    default:
      throw HarnessError(what + ": unknown dtype code " + std::to_string(code) +
                         " in the export schema");
  }
}

}  // namespace aoti
