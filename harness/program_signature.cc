#include "harness/program_signature.h"

#include <nlohmann/json.hpp>

#include "harness/errors.h"

namespace aoti {

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

ProgramSignature ParseProgramSignature(const std::string& json_text, const std::string& what) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw HarnessError(what + ": the program is not valid JSON: " + e.what());
  }
  ProgramSignature sig;
  try {
    const auto& v = j.at("schema_version");
    sig.schema_version = {v.at("major").get<int>(), v.at("minor").get<int>()};
    if (sig.schema_version.major != kSupportedSchemaMajor) {
      throw HarnessError(what + ": program schema version " +
                         std::to_string(sig.schema_version.major) + "." +
                         std::to_string(sig.schema_version.minor) +
                         " is not supported; this harness reads major version " +
                         std::to_string(kSupportedSchemaMajor));
    }
    const auto& graph = j.at("graph_module").at("graph");
    const auto& tensor_values = graph.at("tensor_values");
    const auto& signature = j.at("graph_module").at("signature");
    for (const auto& spec : signature.at("input_specs")) {
      if (spec.contains("user_input")) {
        const auto& arg = spec.at("user_input").at("arg");
        if (!arg.contains("as_tensor")) continue;  // non-tensor user inputs are not listed
        TensorSpec t;
        t.name = arg.at("as_tensor").at("name").get<std::string>();
        const auto& meta = tensor_values.at(t.name);
        t.dtype = ScalarTypeFromSchema(meta.at("dtype").get<int>(), what + " input '" + t.name + "'");
        for (const auto& d : meta.at("sizes")) {
          DimSpec dim;
          if (d.contains("as_int")) {
            dim.size = d.at("as_int").get<int64_t>();
          } else if (d.contains("as_expr")) {
            dim.sym = d.at("as_expr").value("expr_str", "?");
          } else {
            dim.sym = d.dump();
          }
          t.sizes.push_back(dim);
        }
        sig.user_inputs.push_back(std::move(t));
      } else if (spec.contains("parameter")) {
        sig.parameters.push_back(spec.at("parameter").at("parameter_name").get<std::string>());
      } else if (spec.contains("buffer")) {
        sig.buffers.push_back(spec.at("buffer").at("buffer_name").get<std::string>());
      } else if (spec.contains("tensor_constant")) {
        sig.constants.push_back(spec.at("tensor_constant").at("tensor_constant_name").get<std::string>());
      }
    }
    for (const auto& spec : signature.at("output_specs")) {
      if (spec.contains("user_output")) {
        const auto& arg = spec.at("user_output").at("arg");
        sig.user_outputs.push_back(arg.contains("as_tensor")
                                       ? arg.at("as_tensor").at("name").get<std::string>()
                                       : arg.begin().key());
      } else if (spec.contains("buffer_mutation")) {
        sig.mutated_buffers.push_back(spec.at("buffer_mutation").at("buffer_name").get<std::string>());
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw HarnessError(what + ": the program lacks an expected field: " + e.what());
  }
  return sig;
}

}  // namespace aoti
