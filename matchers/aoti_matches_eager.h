// EXPECT_AOTI_MATCHES_EAGER / ASSERT_AOTI_MATCHES_EAGER: the assertion model tests write.
//
//   EXPECT_AOTI_MATCHES_EAGER(aoti::PackageUnderTest());                  // the sample inputs
//   EXPECT_AOTI_MATCHES_EAGER(aoti::PackageUnderTest(), inputs);          // your inputs
//   EXPECT_AOTI_MATCHES_EAGER(aoti::PackageUnderTest(), inputs, options); // per-test options
//
// In a test of your own (aoti_model_test with `srcs`), PackageUnderTest() is the target's
// `package`, and SampleInputs() its sample inputs, to start your own inputs from (the
// same shapes, your values). A target that names several packages by key
// (`packages = {"small": ":m_small", "large": ":m_large"}`) reaches each with
// PackageUnderTest("small").
//
// The check itself (preflight, compiled run, eager, float64, verdict) is the
// gtest-free library harness/check/check.h; this header adapts it to gtest. On a failure the
// case (program, inputs, options, outcome) is recorded for the listener and the reducer
// (harness/case/failing_case.h), and the test.xml gets the failure class and the case path.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <gtest/gtest.h>

#include "harness/check/check.h"

namespace aoti {

// MatcherDefaults: what the matchers take from the test binary: the package under test,
// the packages by key, and the options of a check that gives none. The harness' test main
// (//plugin:model_test_main, which every aoti_model_test runs) sets them from the --aoti_*
// flags; a test binary with a main of its own, and no gflags, calls SetMatcherDefaults
// before its tests run. This library reads no flag.
struct MatcherDefaults {
  std::string package;                    // PackageUnderTest(); empty: none
  std::vector<std::string> packages;      // PackageUnderTest(key): "KEY=PATH" entries, in order
  std::function<CheckOptions()> options;  // unset: CheckOptions{}; may throw HarnessError
  // Whether a failure of this class will be reduced when the test ends (the message then
  // says so, instead of how to reduce it); unset: none is.
  std::function<bool(const std::string& failure_class)> reduces_on_failure;
  // Where the package and the packages were given, for the errors that name them.
  std::string package_given_by = "MatcherDefaults::package";
  std::string packages_given_by = "MatcherDefaults::packages";
};

// SetMatcherDefaults: replaces the defaults (not thread-safe: call it before tests run).
void SetMatcherDefaults(MatcherDefaults defaults);

// PackageUnderTest: the .pt2 an aoti_model_test was given (--aoti_package). Throws
// HarnessError, naming the flag, when there is none (a plain cc_test, or a binary run by
// hand without --aoti_package=PATH).
std::string PackageUnderTest();
// PackageUnderTest(key): one of the packages an aoti_model_test names by key in its
// `packages` attribute (--aoti_packages=KEY=PATH,...), for a test that checks a model at
// several shapes or checkpoints. Throws HarnessError naming the key and the keys there
// are when it is not one of them.
std::string PackageUnderTest(const std::string& key);
// PackageKeys: the keys of `packages`, in the order given (empty when there are none).
std::vector<std::string> PackageKeys();
// SampleInputs: the sample inputs a package was exported with, in order. Throws
// HarnessError, naming the package, when it cannot be read.
std::vector<at::Tensor> SampleInputs(const std::string& package);

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
