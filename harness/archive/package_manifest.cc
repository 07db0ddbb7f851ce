#include "harness/archive/package_manifest.h"

#include <nlohmann/json.hpp>

#include "harness/util/errors.h"

namespace aoti {
namespace {

constexpr const char kFormatPrefix[] = "aoti_harness.package/";
constexpr const char kFormat[] = "aoti_harness.package/1";

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
    m.cuda_version = j.value("cuda_version", "");
    m.seed = j.value("seed", int64_t{0});
    m.inductor_configs_json = j.value("inductor_configs", nlohmann::json::object()).dump();
    const auto& exp = j.value("export", nlohmann::json::object());
    m.strict_export = exp.value("strict", false);
    m.dynamic_shapes = exp.value("dynamic_shapes", false);
    m.from_program = exp.value("from_program", false);
    m.reduced_from = j.value("reduced_from", "");
    if (j.contains("prebuilt")) {
      const auto& p = j.at("prebuilt");
      m.prebuilt = PrebuiltRecord{p.value("package", ""),          p.value("sha256", ""),
                                  p.value("program", ""),          p.value("inputs", ""),
                                  p.value("built_by", ""),         p.value("built_by_from", ""),
                                  p.value("compiled_against", ""), p.value("missing_symbols", ""),
                                  p.value("this_torch", "")};
    }
    const auto& c = j.at("compile");
    m.compile.status = c.at("status").get<std::string>();
    m.compile.seconds = c.value("seconds", 0.0);
    if (c.contains("error")) {
      const auto& e = c.at("error");
      m.compile.error_type = e.value("type", "");
      m.compile.error_message = e.value("message", "");
      m.compile.compiler_errors = e.value("compiler_errors", "");
      m.compile.error_traceback = e.value("traceback", "");
    }
    for (const auto& t : j.at("inputs")) m.inputs.push_back(TensorRecordFromJson(t, what + " input tensor"));
    for (const auto& t : j.at("eager_outputs")) {
      m.eager_outputs.push_back(TensorRecordFromJson(t, what + " eager output tensor"));
    }
    for (const auto& t : j.value("eager_fp64_outputs", nlohmann::json::array())) {
      m.eager_fp64_outputs.push_back(TensorRecordFromJson(t, what + " fp64 eager output tensor"));
    }
    const nlohmann::json shape_inputs = j.value("shape_inputs", nlohmann::json::object());
    for (const auto& [name, records] : shape_inputs.items()) {
      std::vector<TensorRecord> point;
      for (const auto& t : records) point.push_back(TensorRecordFromJson(t, what + " input tensor at shape " + name));
      m.shape_inputs.emplace_back(name, std::move(point));
    }
    m.program_not_held = j.value("program_not_held", "");
    for (const auto& p : j.value("python_ops", nlohmann::json::array())) {
      PythonOp op{p.at("op").get<std::string>(), p.value("defined_at", ""), p.value("module", ""),
                  p.at("nodes").get<int64_t>(), std::nullopt};
      if (p.contains("compiled_calls")) op.compiled_calls = p.at("compiled_calls").get<bool>();
      m.python_ops.push_back(std::move(op));
    }
  } catch (const nlohmann::json::exception& e) {
    throw HarnessError(what + ": extra/aoti_harness/package.json lacks an expected field: " +
                       e.what());
  }
  return m;
}

std::string PackageManifestToJson(const PackageManifest& m) {
  using json = nlohmann::json;
  json compile = {{"status", m.compile.status}, {"seconds", m.compile.seconds}};
  if (!m.compile.error_type.empty() || !m.compile.error_message.empty()) {
    compile["error"] = {{"type", m.compile.error_type},
                        {"message", m.compile.error_message},
                        {"compiler_errors", m.compile.compiler_errors},
                        {"traceback", m.compile.error_traceback}};
  }
  auto records = [](const std::vector<TensorRecord>& rs) {
    json a = json::array();
    for (const auto& r : rs) a.push_back(TensorRecordToJson(r));
    return a;
  };
  json j = {
      {"format", m.format.empty() ? std::string(kFormat) : m.format},
      {"model_name", m.model_name},
      {"model_file", m.model_file},
      {"seed", m.seed},
      {"torch_version", m.torch_version},
      {"torch_git_version", m.torch_git_version},
      {"cuda_version", m.cuda_version},
      {"inductor_configs", m.inductor_configs_json.empty() ? json::object() : json::parse(m.inductor_configs_json)},
      {"export", {{"strict", m.strict_export}, {"dynamic_shapes", m.dynamic_shapes}, {"from_program", m.from_program}}},
      {"compile", compile},
      {"inputs", records(m.inputs)},
      {"eager_outputs", records(m.eager_outputs)},
      {"eager_fp64_outputs", records(m.eager_fp64_outputs)},
  };
  if (!m.reduced_from.empty()) j["reduced_from"] = m.reduced_from;
  if (!m.shape_inputs.empty()) {
    j["shape_inputs"] = json::object();
    for (const auto& [name, rs] : m.shape_inputs) j["shape_inputs"][name] = records(rs);
  }
  if (!m.program_not_held.empty()) j["program_not_held"] = m.program_not_held;
  if (!m.python_ops.empty()) {
    j["python_ops"] = json::array();
    for (const auto& op : m.python_ops) {
      json o = {{"op", op.op}, {"defined_at", op.defined_at}, {"module", op.module}, {"nodes", op.nodes}};
      if (op.compiled_calls) o["compiled_calls"] = *op.compiled_calls;
      j["python_ops"].push_back(o);
    }
  }
  if (m.prebuilt) {
    j["prebuilt"] = {{"package", m.prebuilt->package},
                     {"sha256", m.prebuilt->sha256},
                     {"program", m.prebuilt->program},
                     {"inputs", m.prebuilt->inputs},
                     {"built_by", m.prebuilt->built_by},
                     {"built_by_from", m.prebuilt->built_by_from},
                     {"compiled_against", m.prebuilt->compiled_against},
                     {"missing_symbols", m.prebuilt->missing_symbols},
                     {"this_torch", m.prebuilt->this_torch}};
  }
  // Sorted keys, one space of indent: the same text Python's json.dumps(indent=1,
  // sort_keys=True) writes for the same manifest.
  return j.dump(1);
}

}  // namespace aoti
