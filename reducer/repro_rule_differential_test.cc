// repro.py judges as its test judged: the C++ rule (harness/check/accuracy_rule, with the check's
// unreliable-reference verdict) and repro.py's own rule (judge() in
// reducer/repro/repro_template.py, run by harness/check/same_cases.py --judge at build time)
// give the same verdict on every differential case, under every accuracy mode: fp64 (with
// and without exact_non_fp), strict, assert_close with the dtype's defaults and with the
// test's own rtol and atol, and sqnr (a quantized program's rule) at two thresholds. The cases include outputs at assert_close's rtol, where the side
// rtol scales decides, and eager far from float64.
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

// The check's verdict on one output (harness/check/check.cc's Judge): "passes", "accuracy" or
// "unreliable reference".
std::string CheckVerdict(const SameCase& c, const AccuracyOptions& options) {
  const TensorComparison cmp = CompareOutputs(c.res, c.ref, c.fp64, options);
  if (!cmp.pass) return "accuracy";
  double relative = 0;
  return PassedOnAnUnreliableReference(cmp, c.fp64, &relative) ? "unreliable reference" : "passes";
}

AccuracyOptions Variant(const std::string& name, const SameCase& c) {
  AccuracyOptions o;
  o.tol = c.tol;
  o.ignore_non_fp = c.ignore_non_fp;
  if (name == "fp64_exact_non_fp") o.exact_non_fp = true;
  if (name == "strict") o.mode = AccuracyMode::kStrict;
  if (name == "assert_close" || name == "assert_close_own") o.mode = AccuracyMode::kAssertClose;
  if (name == "assert_close_own") o.rtol = c.tol, o.atol = c.tol / 10;
  if (name == "sqnr" || name == "sqnr_low") o.mode = AccuracyMode::kSqnr;
  if (name == "sqnr_low") o.min_sqnr_db = 8;
  return o;
}

TEST(ReproRule, JudgesEveryCaseAsTheCheckDoes) {
  const std::vector<SameCase> cases = ReadSameCases("reducer/repro_rule_cases");
  ASSERT_GE(cases.size(), 5000u);
  std::map<std::string, std::map<std::string, int>> verdicts;  // variant -> verdict -> cases
  std::map<std::string, int> disagreements;
  int shown = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const SameCase& c = cases[i];
    ASSERT_EQ(c.repro.size(), 7u) << "case " << i << " has no verdicts of repro.py's rule";
    for (const auto& [name, python] : c.repro) {
      const AccuracyOptions options = Variant(name, c);
      const std::string ours = CheckVerdict(c, options);
      ++verdicts[name][python.rfind("raised", 0) == 0 ? "raised" : python];
      const bool agree = python.rfind("raised", 0) == 0 ? ours == "accuracy" : ours == python;
      if (agree) continue;
      ++disagreements[name];
      if (++shown <= 12) {
        ADD_FAILURE() << "case " << i << " under " << name << " (" << DescribeTensor(c.ref) << ", tol " << c.tol
                      << (c.fp64.defined() ? "" : ", no fp64") << "): repro.py says " << python << ", the check "
                      << ours << ": " << DescribeComparison(CompareOutputs(c.res, c.ref, c.fp64, options), options);
      }
    }
  }
  int total = 0;
  for (const auto& [name, by] : verdicts) {
    std::cout << "[repro rule] " << name << ":";
    for (const auto& [v, n] : by) std::cout << " " << v << " " << n << ";";
    std::cout << " " << disagreements[name] << " disagreements\n";
    total += disagreements[name];
  }
  EXPECT_EQ(total, 0);
  // The corpus reaches every verdict it is meant to test.
  EXPECT_GT(verdicts["fp64"]["unreliable reference"], 50);
  EXPECT_GT(verdicts["assert_close"]["passes"], 500);
  EXPECT_GT(verdicts["assert_close"]["accuracy"], 500);
  EXPECT_GT(verdicts["sqnr"]["passes"], 200);
  EXPECT_GT(verdicts["sqnr"]["accuracy"], 200);
}

}  // namespace
}  // namespace aoti
