#include "harness/runner/compiled_runner.h"
#include "harness/util/failure_class.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

#include <ATen/Context.h>
#include <nlohmann/json.hpp>

#include "harness/runner/compiled_model.h"
#include "harness/util/errors.h"
#include "harness/archive/pt2_archive.h"
#include "harness/util/stderr_capture.h"
#include "harness/util/subprocess.h"
#include "harness/archive/tensor_bundle.h"
#include "harness/util/temp_dir.h"
#include "harness/archive/tensor_io.h"

namespace aoti {
namespace {

bool IsExecutable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_IXUSR);
}

CompiledOutcome RunInProcess(const std::string& package, const std::string& model,
                             const std::vector<at::Tensor>& inputs, int64_t seed) {
  CompiledOutcome o;
  try {
    auto archive = Pt2Archive::Open(package);
    auto compiled = CompiledModel::Load(*archive, model);
    if (seed >= 0) at::manual_seed(static_cast<uint64_t>(seed));
    o.outputs = compiled->Run(CopyOf(inputs));  // the model may mutate its inputs in place
    o.kind = OutcomeKind::kOk;
  } catch (const AotiCompileError& e) {
    o.kind = OutcomeKind::kCompileError;
    o.message = e.what();
  } catch (const AotiLoadError& e) {
    o.kind = OutcomeKind::kLoadError;
    o.message = e.what();
  } catch (const AotiRunError& e) {
    o.kind = OutcomeKind::kRuntimeError;
    o.message = e.what();
    o.stderr_text = e.stderr_text();
  } catch (const HarnessError& e) {
    o.kind = OutcomeKind::kHarnessError;
    o.message = e.what();
  }
  return o;
}

}  // namespace

std::string OutcomeKindName(OutcomeKind kind) {
  switch (kind) {
    case OutcomeKind::kOk: return "ok";
    case OutcomeKind::kCompileError: return Name(FailureClass::kCompileError);
    case OutcomeKind::kLoadError: return Name(FailureClass::kLoadError);
    case OutcomeKind::kRuntimeError: return Name(FailureClass::kRuntimeError);
    case OutcomeKind::kSignal: return Name(FailureClass::kSignal);
    case OutcomeKind::kTimeout: return Name(FailureClass::kTimeout);
    case OutcomeKind::kHarnessError: return Name(FailureClass::kHarnessError);
  }
  return "unknown";
}

std::string CompiledOutcome::Summary() const {
  if (kind == OutcomeKind::kSignal) return "signal " + SignalName(signal) + " (" + strsignal(signal) + ")";
  if (kind == OutcomeKind::kOk) return "ok";
  return OutcomeKindName(kind) + ": " + message;
}

std::string FindRunner(const RunnerOptions& options) {
  if (!options.runner_path.empty()) {
    if (!IsExecutable(options.runner_path)) {
      throw HarnessError("--aoti_runner=" + options.runner_path + ": not an executable file");
    }
    return options.runner_path;
  }
  std::vector<std::string> tried;
  for (const char* var : {"TEST_SRCDIR", "RUNFILES_DIR"}) {
    const char* root = std::getenv(var);
    if (!root || !*root) continue;
    const std::string candidate = std::string(root) + "/aoti_harness/harness/runner/aoti_runner";
    if (IsExecutable(candidate)) return candidate;
    tried.push_back(candidate);
  }
  std::string where;
  for (const auto& t : tried) where += " " + t;
  throw HarnessError("cannot find the aoti_runner binary (tried:" + (where.empty() ? std::string(" no runfiles") : where) +
                     "); add //harness/runner:aoti_runner to the test's data and pass --aoti_runner, or use aoti_model_test");
}

namespace {

CompiledOutcome RunInThisProcess(const std::string& package, const std::string& model,
                                 const std::vector<at::Tensor>& inputs, const RunnerOptions& options) {
  const char* old = std::getenv("AOTI_RUNTIME_CHECK_INPUTS");
  const std::string saved = old ? old : "";
  if (options.runtime_check_inputs) ::setenv("AOTI_RUNTIME_CHECK_INPUTS", "1", 1);
  CompiledOutcome o = RunInProcess(package, model, inputs, options.seed);
  if (options.runtime_check_inputs) {
    if (old) ::setenv("AOTI_RUNTIME_CHECK_INPUTS", saved.c_str(), 1);
    else ::unsetenv("AOTI_RUNTIME_CHECK_INPUTS");
  }
  return o;
}

// RunnerCommand: the runner child's argv and its own environment, given its work directory.
std::pair<std::vector<std::string>, std::vector<std::pair<std::string, std::string>>> RunnerCommand(
    const std::string& package, const std::string& model, const RunnerOptions& options, const std::string& work,
    const std::string& in_dir, const std::string& out_dir) {
  std::vector<std::string> argv;
  if (options.python_child) {
    if (options.python.empty() || options.python_runner.empty()) {
      throw HarnessError("the compiled model must run in a Python child (it calls operators written only in Python), "
                         "and " + std::string(options.python.empty() ? "no Python interpreter (--aoti_python)"
                                                                     : "no python_runner.py (--aoti_python_runner_script)") +
                         " was given; aoti_model_test passes both");
    }
    argv = {options.python, options.python_runner};
    for (const auto& what : options.python_imports) {
      argv.push_back("--import");
      argv.push_back(what);
    }
  } else {
    argv = {FindRunner(options)};
  }
  for (const std::string& a : {std::string("--package"), package, std::string("--model"), model,
                               std::string("--inputs"), in_dir, std::string("--outputs"), out_dir}) {
    argv.push_back(a);
  }
  for (const auto& lib : options.op_libraries) {
    argv.push_back("--op_library");
    argv.push_back(lib);
  }
  if (options.seed >= 0) {
    argv.push_back("--seed");
    argv.push_back(std::to_string(options.seed));
  }
  std::vector<std::pair<std::string, std::string>> env = options.env;
  if (options.runtime_check_inputs) env.emplace_back("AOTI_RUNTIME_CHECK_INPUTS", "1");
  // libtorch's loader extracts the package under TMPDIR and leaves it there when the
  // child dies of a signal; inside the work directory it goes with it.
  const bool tmpdir_given = std::any_of(env.begin(), env.end(), [](const auto& kv) { return kv.first == "TMPDIR"; });
  if (!tmpdir_given) env.emplace_back("TMPDIR", work);
  return {argv, env};
}

// ChildOutcome: what the runner child's end says: stopped at the deadline, timed out,
// killed by a signal, or its result.json (ok with its outputs, or the failure it names).
CompiledOutcome ChildOutcome(bool ended, int status, double allowed, const RunnerOptions& options,
                             const std::string& out_dir, std::string stderr_text) {
  CompiledOutcome o;
  o.stderr_text = std::move(stderr_text);
  if (!ended && allowed < options.timeout_s) {
    o.kind = OutcomeKind::kHarnessError;
    o.message = "the compiled model was stopped after " + std::to_string(static_cast<int>(allowed + 0.5)) +
                " s, at the deadline of " + options.deadline.what() + " (its own timeout of " +
                std::to_string(static_cast<int>(options.timeout_s + 0.5)) + " s had not passed): out of time, not a hang";
    return o;
  }
  if (!ended) {
    o.kind = OutcomeKind::kTimeout;
    o.message = "the compiled model ran past the timeout of " + std::to_string(options.timeout_s) +
                " s and was killed (--aoti_timeout_s)";
    return o;
  }
  if (WIFSIGNALED(status)) {
    o.kind = OutcomeKind::kSignal;
    o.signal = WTERMSIG(status);
    o.message = "the compiled model's process died of " + SignalName(o.signal) + " (" + strsignal(o.signal) + ")" +
                (o.stderr_text.empty() ? "" : "; its last output:\n" + LastLines(o.stderr_text, 15));
    return o;
  }
  nlohmann::json result;
  try {
    result = nlohmann::json::parse(ReadTextFile(out_dir + "/result.json"));
  } catch (const std::exception& e) {
    o.kind = OutcomeKind::kHarnessError;
    o.message = std::string(options.python_child ? "python_runner.py" : "aoti_runner") + " exited with status " +
                std::to_string(WEXITSTATUS(status)) + " without a result:\n" + LastLines(o.stderr_text, 15);
    return o;
  }
  const std::string s = result.value("status", "");
  o.message = result.value("message", "");
  if (s == "ok") {
    o.kind = OutcomeKind::kOk;
    o.outputs = ReadTensorBundle(out_dir);
  } else if (s == "compile_error") {
    o.kind = OutcomeKind::kCompileError;
  } else if (s == "load_error") {
    o.kind = OutcomeKind::kLoadError;
  } else if (s == "runtime_error") {
    o.kind = OutcomeKind::kRuntimeError;
  } else {
    o.kind = OutcomeKind::kHarnessError;
  }
  return o;
}

CompiledOutcome RunInChild(const std::string& package, const std::string& model, const std::vector<at::Tensor>& inputs,
                           const RunnerOptions& options) {
  TempDir work("aoti_run");
  const std::string in_dir = work.path() + "/inputs", out_dir = work.path() + "/outputs";
  MakeDirs(in_dir);
  MakeDirs(out_dir);
  WriteTensorBundle(in_dir, inputs);
  const auto [argv, env] = RunnerCommand(package, model, options, work.path(), in_dir, out_dir);
  const double allowed = options.deadline.Cap(options.timeout_s);
  if (!(allowed > 0)) {
    CompiledOutcome o;
    o.kind = OutcomeKind::kHarnessError;
    o.message = "not run: no time is left before " + options.deadline.what();
    return o;
  }
  const std::string log = work.path() + "/child.log";
  int status = 0;
  const bool ended = RunLogged(argv, ChildEnvironment({options.env_pass_through, env}), log, allowed, &status);
  return ChildOutcome(ended, status, allowed, options, out_dir, ReadTextFile(log));
}

}  // namespace

Deadline OneRunDeadline(const RunnerOptions& options) {
  const double t = options.timeout_s;
  return options.deadline.Within(t, "the run's timeout of " + std::to_string(static_cast<long long>(t + 0.5)) +
                                        " s (--aoti_timeout_s)");
}

CompiledOutcome RunCompiled(const std::string& package, const std::string& model,
                            const std::vector<at::Tensor>& inputs, const RunnerOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  CompiledOutcome o;
  if (!options.isolate && !options.python_child) {
    o = RunInThisProcess(package, model, inputs, options);
  } else {
    try {
      o = RunInChild(package, model, inputs, options);
    } catch (const HarnessError& e) {
      o = CompiledOutcome();
      o.kind = OutcomeKind::kHarnessError;
      o.message = e.what();
    }
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return o;
}

}  // namespace aoti
