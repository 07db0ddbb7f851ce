#include "harness/check/check_options.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "harness/util/errors.h"

namespace aoti {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Reader: the fields of one JSON object, each read with its type checked and its name in
// any error; unknown fields are an error too (a misspelt option must not pass unseen).
class Reader {
 public:
  Reader(const json& j, std::string what) : j_(j), what_(std::move(what)) {
    if (!j_.is_object()) throw HarnessError(what_ + " is " + j_.type_name() + ", expected an object");
  }
  const json* Get(const char* key) {
    known_.insert(key);
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string String(const char* key, std::string fallback) {
    const json* v = Get(key);
    if (!v) return fallback;
    if (!v->is_string()) throw Wrong(key, *v, "a string");
    return v->get<std::string>();
  }
  bool Bool(const char* key, bool fallback) {
    const json* v = Get(key);
    if (!v) return fallback;
    if (!v->is_boolean()) throw Wrong(key, *v, "true or false");
    return v->get<bool>();
  }
  double Number(const char* key, double fallback, bool positive) {
    const json* v = Get(key);
    if (!v) return fallback;
    if (!v->is_number()) throw Wrong(key, *v, "a number");
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < 0 || (positive && d == 0)) {
      throw Wrong(key, *v, positive ? "a finite number > 0" : "a finite number >= 0");
    }
    return d;
  }
  std::vector<std::string> Strings(const char* key) {
    const json* v = Get(key);
    std::vector<std::string> out;
    if (!v) return out;
    if (!v->is_array()) throw Wrong(key, *v, "an array of strings");
    for (const auto& e : *v) {
      if (!e.is_string()) throw Wrong(key, *v, "an array of strings");
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  std::string Field(const char* key) const { return what_ + "." + key; }
  // Finish: every field was one this reader knows.
  void Finish() const {
    for (const auto& [k, v] : j_.items()) {
      if (known_.count(k)) continue;
      std::string names;
      for (const auto& n : known_) names += (names.empty() ? "" : ", ") + n;
      throw HarnessError(what_ + " has an unknown field '" + k + "'; the fields are " + names);
    }
  }

 private:
  HarnessError Wrong(const char* key, const json& v, const char* expected) const {
    return HarnessError(Field(key) + " is " + v.dump() + ", expected " + expected);
  }
  const json& j_;
  std::string what_;
  std::set<std::string> known_;
};

}  // namespace

std::string IsolationName(bool isolate) { return isolate ? "child" : "in_process"; }

int VotesFor(int failed, int runs) {
  if (runs <= 0 || failed <= 0) return 20;
  if (failed >= runs) return 1;
  const double rate = static_cast<double>(failed) / runs;
  const int n = static_cast<int>(std::ceil(std::log(0.05) / std::log(1 - rate)));
  return std::clamp(n, 2, 20);
}

json CheckOptionsToJson(const CheckOptions& o, const std::string& relative_to) {
  json accuracy = {{"mode", AccuracyModeName(o.accuracy.mode)},
                   {"tolerance", o.accuracy.tol},
                   {"ignore_non_fp", o.accuracy.ignore_non_fp},
                   {"exact_non_fp", o.accuracy.exact_non_fp}};
  if (o.accuracy.rtol >= 0) accuracy["rtol"] = o.accuracy.rtol;
  if (o.accuracy.atol >= 0) accuracy["atol"] = o.accuracy.atol;
  if (o.accuracy.mode == AccuracyMode::kSqnr) accuracy["min_sqnr_db"] = o.accuracy.min_sqnr_db;
  json libraries = json::array();
  for (const auto& lib : o.runner.op_libraries) {
    if (!relative_to.empty()) {
      std::error_code ec;
      const fs::path rel = fs::path(lib).lexically_relative(fs::absolute(relative_to, ec));
      if (!rel.empty() && *rel.begin() != "..") {
        libraries.push_back(rel.string());
        continue;
      }
    }
    libraries.push_back(lib);
  }
  json env = json::array();
  for (const auto& [k, v] : o.runner.env) env.push_back(k + "=" + v);
  return {{"model", o.model},
          {"accuracy", accuracy},
          {"judged_outputs", o.judged_outputs},
          {"reruns", o.reruns},
          {"votes", o.votes},
          {"runner",
           {{"isolation", IsolationName(o.runner.isolate)},
            {"timeout_s", o.runner.timeout_s},
            {"op_libraries", libraries},
            {"pytree_modules", o.runner.pytree_modules},
            {"python_imports", o.runner.python_imports},
            {"runtime_check_inputs", o.runner.runtime_check_inputs},
            {"seed", o.runner.seed >= 0 ? json(o.runner.seed) : json(nullptr)},
            {"env", env},
            {"env_pass_through", o.runner.env_pass_through}}}};
}

bool IsModuleName(const std::string& name) {
  if (name.empty() || name.size() > 200) return false;
  bool start = true;
  for (const char c : name) {
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (c == '.') {
      if (start) return false;
      start = true;
    } else if (letter || (digit && !start)) {
      start = false;
    } else {
      return false;
    }
  }
  return !start;
}

CheckOptions CheckOptionsFromJson(const json& j, const std::string& what, const std::string& base_dir) {
  CheckOptions o;
  Reader top(j, what);
  o.model = top.String("model", "");
  if (const json* a = top.Get("accuracy")) {
    Reader acc(*a, top.Field("accuracy"));
    o.accuracy.mode_chosen = a->is_object() && a->contains("mode");
    o.accuracy.mode = ParseAccuracyMode(acc.String("mode", AccuracyModeName(o.accuracy.mode)), acc.Field("mode"));
    o.accuracy.min_sqnr_db = acc.Number("min_sqnr_db", o.accuracy.min_sqnr_db, false);
    o.accuracy.tol = acc.Number("tolerance", o.accuracy.tol, false);
    o.accuracy.rtol = acc.Number("rtol", -1, false);
    o.accuracy.atol = acc.Number("atol", -1, false);
    o.accuracy.ignore_non_fp = acc.Bool("ignore_non_fp", false);
    o.accuracy.exact_non_fp = acc.Bool("exact_non_fp", false);
    acc.Finish();
  }
  if (const json* n = top.Get("judged_outputs")) {
    if (!n->is_number_unsigned()) throw HarnessError(top.Field("judged_outputs") + " is " + n->dump() + ", expected a count >= 0");
    o.judged_outputs = n->get<size_t>();
  }
  auto count = [&](const char* key, int low, int fallback) {
    const json* n = top.Get(key);
    if (!n) return fallback;
    if (!n->is_number_integer() || n->get<int64_t>() < low || n->get<int64_t>() > kMaxRuns) {
      throw HarnessError(top.Field(key) + " is " + n->dump() + ", expected a whole number from " + std::to_string(low) +
                         " to " + std::to_string(kMaxRuns));
    }
    return static_cast<int>(n->get<int64_t>());
  };
  o.reruns = count("reruns", 0, o.reruns);
  o.votes = count("votes", 1, o.votes);
  if (const json* r = top.Get("runner")) {
    Reader run(*r, top.Field("runner"));
    const std::string isolation = run.String("isolation", "child");
    if (isolation != "child" && isolation != "in_process") {
      throw HarnessError(run.Field("isolation") + " is '" + isolation + "', expected child or in_process");
    }
    o.runner.isolate = isolation == "child";
    o.runner.timeout_s = run.Number("timeout_s", o.runner.timeout_s, true);
    for (const auto& lib : run.Strings("op_libraries")) {
      if (lib.empty()) throw HarnessError(run.Field("op_libraries") + " holds an empty path");
      o.runner.op_libraries.push_back(lib[0] == '/' || base_dir.empty() ? lib : (fs::path(base_dir) / lib).string());
    }
    for (const auto& m : run.Strings("pytree_modules")) {
      if (!IsModuleName(m)) {
        throw HarnessError(run.Field("pytree_modules") + " holds '" + m +
                           "', expected a Python module name (dotted identifiers, as transformers.modeling_outputs)");
      }
      o.runner.pytree_modules.push_back(m);
    }
    for (const auto& what : run.Strings("python_imports")) {
      if (what.empty()) throw HarnessError(run.Field("python_imports") + " holds an empty name");
      o.runner.python_imports.push_back(what);
    }
    o.runner.runtime_check_inputs = run.Bool("runtime_check_inputs", false);
    if (const json* seed = run.Get("seed")) {
      if (!seed->is_number_integer() || seed->get<int64_t>() < 0) {
        throw HarnessError(run.Field("seed") + " is " + seed->dump() + ", expected a whole number >= 0 (or null)");
      }
      o.runner.seed = seed->get<int64_t>();
    }
    for (const auto& kv : run.Strings("env")) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw HarnessError(run.Field("env") + ": '" + kv + "' is not NAME=VALUE");
      }
      o.runner.env.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
    o.runner.env_pass_through = run.Strings("env_pass_through");
    run.Finish();
  }
  top.Finish();
  return o;
}

}  // namespace aoti
