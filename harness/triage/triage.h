// Triage: every failed AOTI check gets a diagnosis, its evidence and the next step, as an
// experienced AOTI maintainer would give them (the AOTI debugging checklist), from one
// table (DiagnosisTable): each entry has an id, a title, what recognises it, and what it
// tells the user. Adding a case is one entry and one test.
//
// The evidence (TriageEvidence) is what the failed check saw: the failure class and the
// signal, stderr and the exception text, the package's metadata and the host, the inputs
// and the outputs' non-finite values, what a debug re-run said, and, after a reduction,
// the reducer's result. GatherEvidence collects it from a CheckReport; DebugRerun re-runs
// a crash or a NaN/Inf once more in the isolated runner with AOTI_RUNTIME_CHECK_INPUTS=1
// (a run-time setting, so no recompile) and records what it said. The debug settings are
// never left on: they are set for that one child process only.
//
// DiagnosisMarkdown is diagnosis.md (diagnoses, evidence, next steps as commands to copy,
// the table of debug settings with when the wheel reads each); DiagnosisSummary is the
// paragraph the failure message carries.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "harness/check/check.h"
#include "harness/check/diagnosis.h"
#include "harness/check/preflight.h"

namespace aoti {

struct OutputFiniteness {
  std::string name;
  int64_t numel = 0;
  int64_t compiled_nan = 0, compiled_inf = 0, eager_nan = 0, eager_inf = 0;
};

struct TriageEvidence {
  std::string model;                      // the model checked (the options' model resolved)
  std::string package;                  // the path the test gave
  bool package_is_shared_object = false;  // an ELF file, not a .pt2 archive
  std::string failure_class;            // the check's: preflight, compile error, ..., accuracy
  std::string message;                  // the check's message (exception text included)
  std::string stderr_text;              // what the compiled run printed on stderr
  int signal = 0;                       // the signal the compiled run died of
  std::vector<std::string> preflight_problems;
  std::map<std::string, std::string> metadata;  // the package's AOTI metadata (empty: none)
  HostInfo host;
  std::vector<std::string> inputs;      // "float32[32, 16] on cpu", in order
  int64_t non_finite_inputs = 0;        // NaN/Inf elements over all floating inputs
  std::vector<OutputFiniteness> outputs;
  std::vector<std::string> op_libraries;  // custom-op libraries the compiled run loads
  std::vector<std::string> reruns;      // what each debug re-run said, one line each
  // After a reduction (empty otherwise): the culprit node, its operator, nodes left.
  std::string culprit, culprit_op;
  size_t reduced_nodes = 0;
  // A reduction follows when the test ends (DUMP_AOTI_MINIFIER=1): the next steps say
  // where its repro lands instead of how to start one.
  bool reducing = false;
};

struct DiagnosisRule {
  const char* id;
  const char* title;
  const char* recognised_by;  // one line, for --aoti_print_diagnoses and the README
  std::function<std::optional<Diagnosis>(const TriageEvidence&)> match;
};

// DiagnosisTable: every diagnosis, most specific first.
const std::vector<DiagnosisRule>& DiagnosisTable();

// Triage: the diagnoses that match, most specific first (empty for a passing check).
std::vector<Diagnosis> Triage(const TriageEvidence& evidence);

// GatherEvidence: what a failed check saw. `inputs` as the check was given them (null: the
// package's sample inputs); `report` best made with CheckOptions::keep_values, so that
// eager's outputs can be compared for non-finite values.
TriageEvidence GatherEvidence(const std::string& package, const std::vector<at::Tensor>* inputs,
                              const CheckReport& report, const CheckOptions& options);

// NeedsDebugRerun: the check crashed (a signal, a runtime error, a timeout) or made NaN/Inf
// that eager does not.
bool NeedsDebugRerun(const TriageEvidence& evidence);
// DebugRerun: the compiled model run once more, in the isolated runner, with
// AOTI_RUNTIME_CHECK_INPUTS=1; what it said goes to evidence->reruns.
void DebugRerun(const std::string& package, const std::vector<at::Tensor>& inputs, const CheckOptions& options,
                TriageEvidence* evidence);

struct DebugSetting {
  const char* name;
  const char* read;     // "compile time" or "run time", as the torch 2.13 wheel reads it
  const char* where;    // where the wheel reads it
  const char* effect;
  const char* how;      // how to set it for the harness
};
const std::vector<DebugSetting>& DebugSettings();

// DiagnosisMarkdown: diagnosis.md. DiagnosisSummary: one paragraph (id, title, the first
// evidence lines, the first next step), "" when there is no diagnosis.
std::string DiagnosisMarkdown(const std::vector<Diagnosis>& diagnoses, const TriageEvidence& evidence);
std::string DiagnosisSummary(const std::vector<Diagnosis>& diagnoses);

}  // namespace aoti
