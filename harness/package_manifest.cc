#include "harness/package_manifest.h"

#include <nlohmann/json.hpp>

#include "harness/errors.h"

namespace aoti {
namespace {

constexpr const char kFormatPrefix[] = "aoti_harness.package/";

TensorRecord ParseTensorRecord(const nlohmann::json& j, const std::string& what) {
  return TensorRecordFromJson(j, what + " tensor");
}

}  // namespace

PackageManifest ParsePackageManifest(const std::string& text, const std::string& what) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw HarnessError(what + ": extra/aoti_harness/package.json is not valid JSON: " + e.what());
  }
  PackageManifest m;
  try {
    m.format = j.at("format").get<std::string>();
    if (m.format.rfind(kFormatPrefix, 0) != 0 || m.format != std::string(kFormatPrefix) + "1") {
      throw HarnessError(what + ": package.json has format '" + m.format + "', expected '" +
                         kFormatPrefix + "1'; rebuild the package with this harness");
    }
    m.model_name = j.at("model_name").get<std::string>();
    m.model_file = j.value("model_file", "");
    m.torch_version = j.value("torch_version", "");
    m.torch_git_version = j.value("torch_git_version", "");
    m.inductor_configs_json = j.value("inductor_configs", nlohmann::json::object()).dump();
    const auto& exp = j.value("export", nlohmann::json::object());
    m.strict_export = exp.value("strict", false);
    m.dynamic_shapes = exp.value("dynamic_shapes", false);
    const auto& c = j.at("compile");
    m.compile.status = c.at("status").get<std::string>();
    m.compile.seconds = c.value("seconds", 0.0);
    if (c.contains("error")) {
      const auto& e = c.at("error");
      m.compile.error_type = e.value("type", "");
      m.compile.error_message = e.value("message", "");
      m.compile.compiler_errors = e.value("compiler_errors", "");
    }
    for (const auto& t : j.at("inputs")) m.inputs.push_back(ParseTensorRecord(t, what + " input"));
    for (const auto& t : j.at("eager_outputs")) {
      m.eager_outputs.push_back(ParseTensorRecord(t, what + " eager output"));
    }
    for (const auto& t : j.value("eager_fp64_outputs", nlohmann::json::array())) {
      m.eager_fp64_outputs.push_back(ParseTensorRecord(t, what + " fp64 eager output"));
    }
  } catch (const nlohmann::json::exception& e) {
    throw HarnessError(what + ": extra/aoti_harness/package.json lacks an expected field: " +
                       e.what());
  }
  return m;
}

}  // namespace aoti
