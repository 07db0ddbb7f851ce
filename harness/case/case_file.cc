#include "harness/case/case_file.h"

#include <filesystem>
#include <iterator>
#include <set>

#include <glog/logging.h>

#include "harness/util/errors.h"

namespace aoti {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr const char kFormat[] = "aoti_harness.case/2";
constexpr const char kFormatV1[] = "aoti_harness.case/1";

// Relative: `path` relative to `dir` when it lies inside it, or is a file right beside it
// (a repro's ../original.pt2: the test's case directory holds the repro directory), else as
// it is.
std::string Relative(const std::string& path, const std::string& dir) {
  if (path.empty() || dir.empty()) return path;
  std::error_code ec;
  const fs::path rel = fs::absolute(path, ec).lexically_normal().lexically_relative(fs::absolute(dir, ec).lexically_normal());
  if (rel.empty()) return path;
  if (*rel.begin() != "..") return rel.string();
  return std::distance(rel.begin(), rel.end()) == 2 && !fs::is_directory(path, ec) ? rel.string() : path;
}

std::string Joined(const std::string& path, const std::string& dir) {
  return path.empty() || path[0] == '/' ? path : (fs::path(dir) / path).string();
}

}  // namespace

json CaseFileToJson(const CaseFile& c, const std::string& case_dir) {
  json configs = json::parse(c.inductor_configs_json.empty() ? "{}" : c.inductor_configs_json, nullptr, false);
  if (configs.is_discarded()) configs = json::object();
  json j = {{"format", kFormat},
            {"test", c.test},
            {"package", Relative(c.package, case_dir)},
            {"failure_class", c.failure_class},
            {"message", c.message},
            {"check_str", c.check_str},
            {"inductor_configs", configs},
            {"device", c.device},
            {"check_options", CheckOptionsToJson(c.options, case_dir)}};
  if (!c.inputs_dir.empty()) j["inputs"] = Relative(c.inputs_dir, case_dir);
  return j;
}

CaseFile ParseCaseFile(const std::string& text, const std::string& case_dir) {
  const std::string what = case_dir + "/case.json";
  const json c = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (c.is_discarded() || !c.is_object()) {
    throw HarnessError(what + ": not a JSON object; expected the case file the harness writes "
                       "({\"format\": \"" + std::string(kFormat) + "\", \"package\": ..., \"failure_class\": ...})");
  }
  auto str = [&](const char* key) -> std::string {
    const auto it = c.find(key);
    if (it == c.end() || it->is_null()) return "";
    if (!it->is_string()) throw HarnessError(what + ": \"" + key + "\" is " + it->type_name() + ", expected a string");
    return it->get<std::string>();
  };
  CaseFile f;
  const std::string format = str("format");
  if (!format.empty() && format != kFormat && format != kFormatV1) {
    throw HarnessError(what + ": format '" + format + "', expected '" + kFormat + "'");
  }
  f.test = str("test");
  f.package = str("package");
  if (f.package.empty()) throw HarnessError(what + ": no \"package\" (the failing .pt2)");
  f.package = Joined(f.package, case_dir);
  f.inputs_dir = Joined(str("inputs"), case_dir);
  f.failure_class = str("failure_class");
  f.message = str("message");
  f.check_str = str("check_str");
  if (!str("device").empty()) f.device = str("device");
  if (const auto it = c.find("inductor_configs"); it != c.end() && !it->is_null()) {
    if (!it->is_object()) throw HarnessError(what + ": \"inductor_configs\" is " + it->type_name() + ", expected an object");
    f.inductor_configs_json = it->dump();
  }
  if (const auto it = c.find("check_options"); it != c.end() && !it->is_null()) {
    f.options = CheckOptionsFromJson(*it, what + ": check_options", case_dir);
  } else if (format == kFormatV1 || format.empty()) {
    // An older harness wrote the model and the accuracy mode and tolerance only.
    json options = json::object();
    if (c.contains("model")) options["model"] = c.at("model");
    if (const auto acc = c.find("accuracy"); acc != c.end() && !acc->is_null()) {
      if (!acc->is_object()) throw HarnessError(what + ": \"accuracy\" is " + acc->type_name() + ", expected an object");
      options["accuracy"] = *acc;
    }
    f.options = CheckOptionsFromJson(options, what, case_dir);
  }
  return f;
}

std::vector<std::string> PathsOutsideCaseDir(const CaseFile& c, const std::string& case_dir) {
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(case_dir, ec), ec);
  const bool parent_is_a_case = fs::exists(dir.parent_path() / "case.json", ec);
  auto inside = [&](const std::string& path, bool file) {
    const fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
    const fs::path rel = p.lexically_relative(dir);
    if (!rel.empty() && *rel.begin() != "..") return true;
    return file && parent_is_a_case && p.parent_path() == dir.parent_path();
  };
  std::vector<std::string> outside;
  if (!c.package.empty() && !inside(c.package, true)) outside.push_back("package: " + c.package);
  if (!c.inputs_dir.empty() && !inside(c.inputs_dir, false)) outside.push_back("inputs: " + c.inputs_dir);
  for (const auto& lib : c.options.runner.op_libraries) {
    if (!inside(lib, false)) outside.push_back("op library: " + lib);
  }
  return outside;
}

std::vector<std::string> CopyOpLibraries(const std::vector<std::string>& libraries, const std::string& dir) {
  std::vector<std::string> out;
  std::set<std::string> names;
  for (const auto& lib : libraries) {
    std::string name = fs::path(lib).filename().string();
    for (int k = 2; !names.insert(name).second; ++k) name = std::to_string(k) + "_" + fs::path(lib).filename().string();
    const fs::path copy = fs::path(dir) / "op_libraries" / name;
    std::error_code ec;
    fs::create_directories(copy.parent_path(), ec);
    if (!ec) fs::copy_file(lib, copy, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      LOG(WARNING) << "could not copy the op library " << lib << " to " << copy << ": " << ec.message()
                   << "; the case names it where it is";
      out.push_back(lib);
      continue;
    }
    out.push_back(copy.string());
  }
  return out;
}

}  // namespace aoti
