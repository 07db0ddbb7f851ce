// CheckOptions: everything a check's verdict depends on besides the package and the inputs
// (the model, the accuracy rule and its tolerances, which outputs are judged, how the
// compiled model is run). It is one value that travels: a test's options are written once
// into case.json by CheckOptionsToJson and read back by CheckOptionsFromJson, and the
// listener, aoti_reduce, repro.py and the generated repro_test all judge by it.
// Flags are parsed into it at the edge (plugin/check_flags.h), never below.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "harness/check/accuracy_rule.h"
#include "harness/runner/compiled_runner.h"

namespace aoti {

struct CheckOptions {
  // The model inside the archive; "" means the package's own (its manifest's model_name,
  // else the one model the archive holds): ResolveModelName in harness/archive/pt2_archive.h.
  std::string model;
  AccuracyOptions accuracy;
  RunnerOptions runner;
  // judged_outputs: only the first N outputs are compared (0: all). The reducer's programs
  // with their intermediates exposed put the program's own outputs first.
  size_t judged_outputs = 0;
  // reruns: after the compiled run fails (accuracy, a runtime error, a signal; not a
  // timeout), it is run this many more times on the same inputs. A failure that does not
  // come back every time is flaky: the report gives its rate (CheckReport::runs_failed of
  // CheckReport::runs), and the case it leaves votes (below).
  int reruns = 3;
  // votes: the runs a pass must hold for: the check fails when any of them fails the way
  // the first failing run did. 1 (the default): one run judges. A flaky case's options carry
  // VotesFor its rate, so its reduction, repro.py and repro_test vote alike.
  int votes = 1;
  // keep_values: the report keeps eager's and float64's outputs too (the compiled ones are
  // in its outcome), for a picture of the error (the reducer's report.html). Not an option
  // of the test's verdict: not serialised.
  bool keep_values = false;
  // inputs_from: where the inputs given to the check came from, for its messages ("made by
  // the harness at shape 'min' (...)"); "" is the package's sample, or "the inputs given".
  // Not an option of the test's verdict: not serialised.
  std::string inputs_from;
};

// kMaxRuns: the most reruns or votes a check takes.
constexpr int kMaxRuns = 50;

// VotesFor: the runs that see a failure of this rate (failed of runs) at least once with
// 95% probability, at least 2 and at most 20.
int VotesFor(int failed, int runs);

// CheckOptionsToJson: the options as case.json's "check_options" object. The runner's
// path (where this machine keeps aoti_runner) is not an option of the test and is left
// out. Op libraries under `relative_to` (a case or repro directory) are written relative
// to it, so the directory can be moved, uploaded and read elsewhere.
nlohmann::json CheckOptionsToJson(const CheckOptions& options, const std::string& relative_to = "");

// CheckOptionsFromJson: the inverse. `what` names the file and field for errors (e.g.
// "case/case.json: check_options"); relative op library paths are joined to `base_dir`.
// Throws HarnessError naming the field and what was expected for a field of the wrong type,
// an unknown field, an unknown accuracy mode or isolation, a negative or non-finite
// tolerance, or a timeout that is not positive.
CheckOptions CheckOptionsFromJson(const nlohmann::json& j, const std::string& what, const std::string& base_dir = "");

// IsolationName: "child" or "in_process", as --aoti_isolation and case.json spell it.
std::string IsolationName(bool isolate);

// IsModuleName: `name` is a Python module name, dotted identifiers (transformers.modeling_outputs),
// as --aoti_pytree_modules and a case's runner.pytree_modules must hold.
bool IsModuleName(const std::string& name);

}  // namespace aoti
