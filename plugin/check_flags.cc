#include "plugin/check_flags.h"

#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <gflags/gflags.h>

#include "harness/util/deadline.h"
#include "harness/util/errors.h"
#include "plugin/flags.h"
#include "harness/archive/tensor_bundle.h"
#include "harness/util/strings.h"

namespace aoti {
namespace {

bool GivenOnCommandLine(const char* flag) {
  gflags::CommandLineFlagInfo info;
  return gflags::GetCommandLineFlagInfo(flag, &info) && !info.is_default;
}

}  // namespace

CheckOptions ReadCheckOptionsFile(const std::string& path) {
  const std::string text = ReadTextFile(path);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    throw HarnessError(path + ": not a JSON object; expected check options (a case.json, or a repro's "
                       "check_options.json)");
  }
  const std::string dir = std::filesystem::path(AbsolutePath(path)).parent_path().string();
  if (j.contains("check_options")) return CheckOptionsFromJson(j.at("check_options"), path + ": check_options", dir);
  return CheckOptionsFromJson(j, path, dir);
}

CheckOptions CheckOptionsFromFlags(const CheckOptions* given_base) {
  CheckOptions o;
  bool all = true;  // every flag counts, not only those given on the command line
  if (given_base) {
    o = *given_base;
    all = false;
  } else if (!FLAGS_aoti_check_options.empty()) {
    o = ReadCheckOptionsFile(FLAGS_aoti_check_options);
    all = false;
  }
  auto use = [&](const char* flag) { return all || GivenOnCommandLine(flag); };
  if (use("aoti_model_name")) o.model = FLAGS_aoti_model_name;
  if (use("aoti_tolerance")) {
    if (!(FLAGS_aoti_tolerance >= 0)) {
      throw HarnessError("--aoti_tolerance=" + std::to_string(FLAGS_aoti_tolerance) + ": expected a number >= 0");
    }
    o.accuracy.tol = FLAGS_aoti_tolerance;
  }
  if (use("aoti_rtol")) o.accuracy.rtol = FLAGS_aoti_rtol;
  if (use("aoti_atol")) o.accuracy.atol = FLAGS_aoti_atol;
  if (use("aoti_ignore_non_fp")) o.accuracy.ignore_non_fp = FLAGS_aoti_ignore_non_fp;
  if (use("aoti_exact_non_fp")) o.accuracy.exact_non_fp = FLAGS_aoti_exact_non_fp;
  if (use("aoti_accuracy")) {
    o.accuracy.mode = ParseAccuracyMode(FLAGS_aoti_accuracy, "--aoti_accuracy");
    // Chosen by the test (its command line, its environment); else the check picks the rule
    // that fits the program.
    if (GivenOnCommandLine("aoti_accuracy") || std::getenv("AOTI_ACCURACY")) o.accuracy.mode_chosen = true;
  }
  if (use("aoti_min_sqnr_db")) {
    if (!(FLAGS_aoti_min_sqnr_db >= 0) || !std::isfinite(FLAGS_aoti_min_sqnr_db)) {
      throw HarnessError("--aoti_min_sqnr_db=" + std::to_string(FLAGS_aoti_min_sqnr_db) + ": expected a number of dB >= 0");
    }
    o.accuracy.min_sqnr_db = FLAGS_aoti_min_sqnr_db;
  }
  if (use("aoti_isolation")) {
    if (FLAGS_aoti_isolation != IsolationName(true) && FLAGS_aoti_isolation != IsolationName(false)) {
      throw HarnessError("--aoti_isolation=" + FLAGS_aoti_isolation + ": expected child or in_process");
    }
    o.runner.isolate = FLAGS_aoti_isolation == IsolationName(true);
  }
  if (use("aoti_timeout_s")) {
    if (!(FLAGS_aoti_timeout_s > 0)) {
      throw HarnessError("--aoti_timeout_s=" + std::to_string(FLAGS_aoti_timeout_s) +
                         ": expected a positive number of seconds");
    }
    o.runner.timeout_s = FLAGS_aoti_timeout_s;
  }
  // Where this machine keeps the runner is no option of the test: always the flag's. Nor
  // is the time this process has: every compiled run stops at the test's deadline.
  o.runner.runner_path = FLAGS_aoti_runner;
  o.runner.deadline = Deadline::ForThisTest();
  // Op libraries add up: a file's (a repro's own copies) and the flag's (aoti_model_test's).
  for (const auto& lib : SplitFlagList(FLAGS_aoti_op_libraries)) {
    const std::string path = AbsolutePath(lib);
    bool have = false;
    for (const auto& known : o.runner.op_libraries) have = have || AbsolutePath(known) == path;
    if (!have) o.runner.op_libraries.push_back(path);
  }
  // Pytree modules add up too: a file's (a repro's case) and the flag's.
  for (const auto& m : SplitFlagList(FLAGS_aoti_pytree_modules)) {
    if (!IsModuleName(m)) {
      throw HarnessError("--aoti_pytree_modules holds '" + m +
                         "', expected Python module names, comma-separated (as transformers.modeling_outputs)");
    }
    if (std::find(o.runner.pytree_modules.begin(), o.runner.pytree_modules.end(), m) == o.runner.pytree_modules.end()) {
      o.runner.pytree_modules.push_back(m);
    }
  }
  // What a Python child imports adds up too (a case's and the flag's); the interpreter and
  // the script are this machine's.
  for (const auto& what : SplitFlagList(FLAGS_aoti_python_imports)) {
    const bool file = what.size() > 3 && what.compare(what.size() - 3, 3, ".py") == 0;
    if (!file && !IsModuleName(what)) {
      throw HarnessError("--aoti_python_imports holds '" + what +
                         "', expected Python module names or .py files, comma-separated (as "
                         "transformers.integrations.moe)");
    }
    const std::string entry = file ? AbsolutePath(what) : what;
    if (std::find(o.runner.python_imports.begin(), o.runner.python_imports.end(), entry) ==
        o.runner.python_imports.end()) {
      o.runner.python_imports.push_back(entry);
    }
  }
  o.runner.python = FLAGS_aoti_python;
  o.runner.python_runner = FLAGS_aoti_python_runner_script;
  if (use("aoti_runtime_check_inputs")) o.runner.runtime_check_inputs = FLAGS_aoti_runtime_check_inputs;
  if (use("aoti_seed")) o.runner.seed = FLAGS_aoti_seed < 0 ? -1 : FLAGS_aoti_seed;
  if (use("aoti_reruns")) {
    if (FLAGS_aoti_reruns < 0 || FLAGS_aoti_reruns > kMaxRuns) {
      throw HarnessError("--aoti_reruns=" + std::to_string(FLAGS_aoti_reruns) + ": expected 0 to " +
                         std::to_string(kMaxRuns));
    }
    o.reruns = FLAGS_aoti_reruns;
  }
  if (use("aoti_votes")) {
    if (FLAGS_aoti_votes < 1 || FLAGS_aoti_votes > kMaxRuns) {
      throw HarnessError("--aoti_votes=" + std::to_string(FLAGS_aoti_votes) + ": expected 1 to " +
                         std::to_string(kMaxRuns));
    }
    o.votes = FLAGS_aoti_votes;
  }
  if (use("aoti_runner_env")) {
    o.runner.env.clear();
    for (const auto& kv : SplitFlagList(FLAGS_aoti_runner_env)) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw HarnessError("--aoti_runner_env: '" + kv + "' is not NAME=VALUE");
      }
      o.runner.env.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
  }
  if (use("aoti_child_env_pass_through")) o.runner.env_pass_through = SplitFlagList(FLAGS_aoti_child_env_pass_through);
  return o;
}

}  // namespace aoti
