// CompiledRunner: runs a package's AOTI-compiled model on inputs and classifies what
// happened. By default it runs in a child process (harness/runner/aoti_runner.cc), so a
// segfault, abort, illegal instruction or hang is an outcome, not the end of the test:
//
//   ok             outputs are available
//   compile error  the archive records that the AOTI compile failed at packaging time
//   load error     libtorch could not load the compiled model
//   runtime error  the compiled model raised (the message, plus what it printed on stderr)
//   signal         the child died of a signal (SIGSEGV, SIGILL, SIGABRT, SIGFPE, ...)
//   timeout        the child ran past the timeout and was killed
//   harness error  bad input to the harness itself (missing file, no such model)
//
// The child is started by Subprocess (harness/util/subprocess.h): its own process group, death
// with its parent, an explicit environment without PyTorch's debug and repro variables;
// the group is killed on timeout and whenever the runner object goes away early.
#pragma once

#include <cstdint>
#include <string>

#include "harness/util/deadline.h"
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

namespace aoti {

enum class OutcomeKind { kOk, kCompileError, kLoadError, kRuntimeError, kSignal, kTimeout, kHarnessError };

// OutcomeKindName: "ok", "compile error", "load error", "runtime error", "signal",
// "timeout", "harness error".
std::string OutcomeKindName(OutcomeKind kind);

struct CompiledOutcome {
  OutcomeKind kind = OutcomeKind::kHarnessError;
  int signal = 0;             // for kSignal
  std::string message;        // one paragraph a person can act on
  std::string stderr_text;    // what the compiled model (or the child) printed
  std::vector<at::Tensor> outputs;
  double seconds = 0;
  bool ok() const { return kind == OutcomeKind::kOk; }
  // Summary: "signal SIGSEGV (Segmentation fault)", "runtime error: ...", ...
  std::string Summary() const;
};

struct RunnerOptions {
  bool isolate = true;                     // child process (default) or in this process
  double timeout_s = 300;                  // child only
  std::string runner_path;                 // the aoti_runner binary; found in runfiles if empty
  std::vector<std::string> op_libraries;   // shared libraries of custom ops for the child
  // The Python modules the model repository declares whose pytree types its programs use
  // (--aoti_pytree_modules; transformers' ModelOutput in transformers.modeling_outputs): the
  // harness's Python readers (the compile server, repro.py) import these to read a program,
  // and never a module that only a file names.
  std::vector<std::string> pytree_modules;
  // A model that calls operators written only in Python (the package's python_ops), where
  // the test asks for it: the compiled model runs in a Python child (tools/python_runner.py,
  // the same protocol as aoti_runner) that imports these first, modules ("transformers") or
  // .py files, and the check judges it against the references Python recorded when the
  // package was built. Empty: the check says why such a model cannot run, before anything runs.
  std::vector<std::string> python_imports;
  // python / python_runner: the interpreter and tools/python_runner.py for that child (this
  // machine's, like runner_path: never part of a case); python_child: this run goes through
  // it (set by the check for a package it holds in Python).
  std::string python, python_runner;
  bool python_child = false;
  bool runtime_check_inputs = false;       // AOTI_RUNTIME_CHECK_INPUTS=1 for the run
  // seed: ATen's generator seeded with it before the run (and before eager's, by the check),
  // so a model compiled with fallback_random=True draws what eager draws; negative: unseeded.
  int64_t seed = -1;
  std::vector<std::pair<std::string, std::string>> env;  // extra environment for the child
  // PyTorch debug variables (StrippedTorchVariables) the child keeps; "*" keeps all.
  std::vector<std::string> env_pass_through;
  // deadline: the process' (Deadline::ForThisTest under Bazel), by default too, so options
  // a test builds by hand (CheckOptions{}) run under it as well. The run's timeout is capped
  // at what is left of it; a run stopped by the deadline before its own timeout is a
  // harness error (out of time), not a hang. Not part of a case: never written to JSON.
  Deadline deadline = Deadline::ForThisTest();
};

// OneRunDeadline: what one in-process run (eager, float64) may take, as a compiled run may:
// options.timeout_s (--aoti_timeout_s), under options.deadline.
Deadline OneRunDeadline(const RunnerOptions& options);

CompiledOutcome RunCompiled(const std::string& package, const std::string& model,
                            const std::vector<at::Tensor>& inputs, const RunnerOptions& options);

// FindRunner: options.runner_path if set, else the aoti_runner in this test's runfiles.
// Throws HarnessError saying where it looked.
std::string FindRunner(const RunnerOptions& options);

}  // namespace aoti
