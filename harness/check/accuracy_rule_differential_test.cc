// The accuracy rule against the installed wheel's torch._dynamo.utils.same, case for case.
// The cases and upstream's verdicts come from harness/check/same_cases.py, run at build time
// through @torch//:python: float32, float16, bfloat16, float64, complex64, int32, int64
// and bool outputs; NaN and Inf; numel below and above 1000; 4-D tensors with trailing
// 1x1 dims; several tol values; compiled errors near the RMSE bound's multipliers; with
// and without a float64 reference; ignore_non_fp on and off.
#include <iostream>
#include <map>
#include <string>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "harness/check/accuracy_rule.h"
#include "harness/check/same_cases_reader.h"
#include "harness/archive/tensor_io.h"

namespace aoti {
namespace {

constexpr char kCases[] = "harness/check/same_cases";

using Case = SameCase;

std::vector<Case>& Cases() {
  static std::vector<Case>* cases = new std::vector<Case>(ReadSameCases(kCases));
  return *cases;
}

std::string Kind(const Case& c) {
  return std::string(c10::toString(c.ref.scalar_type())) + (c.fp64.defined() ? "" : " (no fp64)") +
         (c.ignore_non_fp ? " ignore_non_fp" : "");
}

TEST(DifferentialAgainstUpstreamSame, NoDisagreement) {
  const auto& cases = Cases();
  ASSERT_GE(cases.size(), 10000u);
  std::map<std::string, std::pair<int, int>> by_kind;  // kind -> (cases, disagreements)
  int disagreements = 0, upstream_passes = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    AccuracyOptions options;
    options.tol = c.tol;
    options.ignore_non_fp = c.ignore_non_fp;
    const TensorComparison ours = CompareOutputs(c.res, c.ref, c.fp64, options);
    auto& k = by_kind[Kind(c)];
    ++k.first;
    upstream_passes += c.same;
    if (ours.pass == c.same) continue;
    ++k.second;
    if (++disagreements <= 15) {
      ADD_FAILURE() << "case " << i << " (" << Kind(c) << ", " << DescribeTensor(c.ref) << ", tol " << c.tol
                    << "): upstream says " << (c.same ? "pass" : "fail") << ", ours " << (ours.pass ? "pass" : "fail")
                    << ": " << DescribeComparison(ours, options);
    }
  }
  for (const auto& [kind, n] : by_kind) {
    std::cout << "[same] " << kind << ": " << n.first << " cases, " << n.second << " disagreements\n";
  }
  std::cout << "[same] " << cases.size() << " cases (" << upstream_passes << " pass upstream), " << disagreements
            << " disagreements\n";
  EXPECT_EQ(disagreements, 0);
}

// On purpose, and off by default: bool and integer outputs compared exactly, where
// upstream allows allclose at tol (|eager - compiled| <= tol + tol * |compiled|).
TEST(DifferentialAgainstUpstreamSame, ExactNonFloatingIsAnOptionThatOnlyTightens) {
  int tightened = 0, integer_cases = 0;
  for (const Case& c : Cases()) {
    if (c10::isFloatingType(c.ref.scalar_type()) || c10::isComplexType(c.ref.scalar_type()) || c.ignore_non_fp) continue;
    if (c.ref.scalar_type() != c.res.scalar_type()) continue;
    ++integer_cases;
    AccuracyOptions options;
    options.tol = c.tol;
    options.exact_non_fp = true;
    const bool exact = CompareOutputs(c.res, c.ref, c.fp64, options).pass;
    EXPECT_EQ(exact, at::equal(c.res, c.ref));
    EXPECT_FALSE(exact && !c.same) << "the exact option passed what upstream fails";
    tightened += c.same && !exact;
  }
  EXPECT_GT(integer_cases, 500);
  EXPECT_GT(tightened, 0) << "no case where upstream's allclose at tol passes unequal integers";
}

}  // namespace
}  // namespace aoti
