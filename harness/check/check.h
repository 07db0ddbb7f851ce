// The AOTI check as a library, with no gtest in it: the gtest assertion
// (matchers/aoti_matches_eager.h) and the reducer's oracle both call it.
//
// Four steps:
//   1. preflight: the package against this host (device, platform, CPU ISA) and the
//      inputs against the program (device, dtype, shape with dynamic ranges, strides);
//   2. the compiled model, in a child process by default (crashes and hangs are
//      outcomes: signal, timeout, runtime/load/compile error, each with its message);
//   3. eager and float64 through the C++ interpreter;
//   4. the verdict per output (harness/check/accuracy_rule.h).
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "harness/check/accuracy_rule.h"
#include "harness/check/check_options.h"
#include "harness/runner/compiled_runner.h"
#include "harness/check/diagnosis.h"

namespace aoti {

struct CheckReport {
  bool pass = false;
  std::string model;          // the model checked (CheckOptions::model resolved)
  std::string package_name;   // the package by its Bazel label, else its file name (Pt2Archive::DisplayName)
  // "" when passing; else preflight, compile error, ..., accuracy; or a verdict that the
  // check cannot judge: nondeterministic (the model is random), unreliable reference (eager
  // is far from float64), harness disagreement (the interpreter and Python eager differ),
  // not supported (the program uses a construct the interpreter does not run yet).
  std::string failure_class;
  std::string message;
  CompiledOutcome outcome;
  std::vector<TensorComparison> comparisons;
  std::vector<std::string> preflight_problems;  // each problem the preflight found
  std::string fp64_note;  // set when there is no float64 reference, and why
  // accuracy: the rule the outputs were judged by (the test's, or the one the check picked
  // for the program, with accuracy_note saying why); a failing case carries it.
  AccuracyOptions accuracy;
  std::string accuracy_note;
  // A package brought in as shipped (aoti_prebuilt_package): which torch built it and which
  // torch the test runs ("built by torch 2.12.1 (...); tested under torch 2.13.0"); "" else.
  std::string built_by;
  // runs: the compiled runs this verdict rests on (1; after a failure 1 + the reruns; with
  // votes, up to CheckOptions::votes). runs_failed: those that failed as this report says.
  // flaky: the failure came back in some runs only (the message gives the rate).
  // outputs_vary: two compiled runs on the same inputs gave different outputs.
  int runs = 1, runs_failed = 0;
  bool flaky = false, outputs_vary = false;
  // The nodes that draw random numbers, for a nondeterministic model ("name (op)").
  std::vector<std::string> random_nodes;
  // fp64_device: where the float64 reference ran ("cpu", "cuda:0"): the package's device
  // where it has float64 kernels, else the CPU. Empty when there was no float64 run.
  std::string fp64_device;
  // With CheckOptions::keep_values, from step 3 on: eager's outputs, and float64's
  // (undefined where there is no float64 reference).
  std::vector<at::Tensor> eager_outputs, fp64_outputs;
  // Set by the gtest adapter on a failure (harness/triage/triage.h): the diagnoses, most specific
  // first, and diagnosis.md. The library's check itself does no triage.
  std::vector<Diagnosis> diagnoses;
  std::string diagnosis_markdown;
};

// CheckAotiMatchesEager runs the four steps. `inputs` null means the sample inputs.
// Never throws for a problem with the package, the inputs or the run: each is a
// failure class in the report ("harness error" where the harness itself could not go on).
CheckReport CheckAotiMatchesEager(const std::string& package, const std::vector<at::Tensor>* inputs,
                                  const CheckOptions& options);

}  // namespace aoti
