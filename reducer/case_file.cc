#include "reducer/case_file.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "harness/errors.h"

namespace aoti {

CaseFile ParseCaseFile(const std::string& text, const std::string& case_dir) {
  const std::string what = case_dir + "/case.json";
  const nlohmann::json c = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (c.is_discarded() || !c.is_object()) {
    throw HarnessError(what + ": not a JSON object; expected the case file the harness writes "
                       "({\"format\": \"aoti_harness.case/1\", \"package\": ..., \"failure_class\": ...})");
  }
  auto str = [&](const char* key) -> std::string {
    const auto it = c.find(key);
    if (it == c.end() || it->is_null()) return "";
    if (!it->is_string()) throw HarnessError(what + ": \"" + key + "\" is " + it->type_name() + ", expected a string");
    return it->get<std::string>();
  };
  CaseFile f;
  const std::string format = str("format");
  if (!format.empty() && format != "aoti_harness.case/1") {
    throw HarnessError(what + ": format '" + format + "', expected 'aoti_harness.case/1'");
  }
  f.package = str("package");
  if (f.package.empty()) throw HarnessError(what + ": no \"package\" (the failing .pt2)");
  if (f.package[0] != '/') f.package = case_dir + "/" + f.package;
  const std::string inputs = str("inputs");
  if (!inputs.empty()) f.inputs_dir = inputs[0] == '/' ? inputs : case_dir + "/" + inputs;
  f.failure_class = str("failure_class");
  f.check_str = str("check_str");
  const auto acc = c.find("accuracy");
  if (acc != c.end() && !acc->is_null()) {
    if (!acc->is_object()) throw HarnessError(what + ": \"accuracy\" is " + acc->type_name() + ", expected an object");
    f.has_accuracy = true;
    const auto mode = acc->find("mode");
    if (mode != acc->end()) {
      if (!mode->is_string()) throw HarnessError(what + ": \"accuracy.mode\" is not a string");
      const std::string m = mode->get<std::string>();
      if (m != "fp64" && m != "strict") {
        throw HarnessError(what + ": \"accuracy.mode\" is '" + m + "', expected 'fp64' or 'strict'");
      }
      f.strict = m == "strict";
    }
    const auto tol = acc->find("tolerance");
    if (tol != acc->end()) {
      if (!tol->is_number()) throw HarnessError(what + ": \"accuracy.tolerance\" is not a number");
      f.tolerance = tol->get<double>();
      if (!std::isfinite(f.tolerance) || f.tolerance < 0) {
        throw HarnessError(what + ": \"accuracy.tolerance\" is " + tol->dump() + ", expected a finite number >= 0");
      }
    }
  }
  return f;
}

}  // namespace aoti
