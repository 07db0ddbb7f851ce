// EXPECT_AOTI_MATCHES_EAGER / ASSERT_AOTI_MATCHES_EAGER: the assertion model tests write.
//
//   EXPECT_AOTI_MATCHES_EAGER(FLAGS_aoti_package);                  // the sample inputs
//   EXPECT_AOTI_MATCHES_EAGER(FLAGS_aoti_package, inputs);          // your inputs
//   EXPECT_AOTI_MATCHES_EAGER(FLAGS_aoti_package, inputs, options); // per-test options
//
// Four steps:
//   1. preflight: the package against this host (device, platform, CPU ISA) and the
//      inputs against the program (device, dtype, shape with dynamic ranges, strides);
//   2. the compiled model, in a child process by default (crashes and hangs are
//      outcomes: signal, timeout, runtime/load/compile error, each with its message);
//   3. eager and float64 through the C++ interpreter;
//   4. the verdict per output (matchers/accuracy_rule.h).
// On a failure the case (program, inputs, options, outcome) is recorded for the
// listener and the reducer (harness/failing_case.h).
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <gtest/gtest.h>

#include "harness/compiled_runner.h"
#include "matchers/accuracy_rule.h"

namespace aoti {

struct CheckOptions {
  std::string model = "model";
  AccuracyOptions accuracy;
  RunnerOptions runner;
};

// CheckOptionsFromFlags: the --aoti_* flags (tolerance, accuracy, isolation, timeout,
// runner, op libraries). Throws HarnessError for a bad flag value.
CheckOptions CheckOptionsFromFlags();

struct CheckReport {
  bool pass = false;
  std::string failure_class;  // "" when passing; else preflight, compile error, ..., accuracy
  std::string message;
  CompiledOutcome outcome;
  std::vector<TensorComparison> comparisons;
  std::string fp64_note;  // set when there is no float64 reference, and why
};

// CheckAotiMatchesEager runs the four steps. `inputs` null means the sample inputs.
CheckReport CheckAotiMatchesEager(const std::string& package, const std::vector<at::Tensor>* inputs,
                                  const CheckOptions& options);

// AotiMatchesEager: the check as a gtest AssertionResult; records the failing case.
// `report`, when given, receives the full report (for printing a summary).
::testing::AssertionResult AotiMatchesEager(const std::string& package, const std::vector<at::Tensor>* inputs,
                                            const CheckOptions& options, CheckReport* report = nullptr);
::testing::AssertionResult AotiMatchesEager(const std::string& package);
::testing::AssertionResult AotiMatchesEager(const std::string& package, const std::vector<at::Tensor>& inputs);
::testing::AssertionResult AotiMatchesEager(const std::string& package, const std::vector<at::Tensor>& inputs,
                                            const CheckOptions& options);

}  // namespace aoti

#define AOTI_MATCHES_EAGER_IMPL_(on_failure, ...)                                   \
  GTEST_AMBIGUOUS_ELSE_BLOCKER_                                                     \
  if (const ::testing::AssertionResult aoti_result_ = ::aoti::AotiMatchesEager(__VA_ARGS__)) \
    ;                                                                               \
  else                                                                              \
    on_failure(aoti_result_.message())

#define EXPECT_AOTI_MATCHES_EAGER(...) AOTI_MATCHES_EAGER_IMPL_(GTEST_NONFATAL_FAILURE_, __VA_ARGS__)
#define ASSERT_AOTI_MATCHES_EAGER(...) AOTI_MATCHES_EAGER_IMPL_(GTEST_FATAL_FAILURE_, __VA_ARGS__)
