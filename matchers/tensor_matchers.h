// gMock matchers for tensors, with failure text a person can act on.
//
//   EXPECT_THAT(got, TensorNear(expected, /*rtol=*/1e-5, /*atol=*/1e-8));
//   EXPECT_THAT(compiled, MatchesEagerWithFp64Reference(eager, fp64, AccuracyOptions{}));
//
// On a mismatch the explanation counts the mismatched elements, gives the greatest
// absolute and relative differences with their indices, got / eager / fp64 at the worst
// element, and (for the fp64 rule) both RMSEs and the bound they were held to.
#pragma once

#include <ostream>
#include <string>

#include <ATen/core/Tensor.h>
#include <gmock/gmock.h>

#include "harness/check/accuracy_rule.h"

namespace aoti {

class TensorNearMatcher {
 public:
  using is_gtest_matcher = void;
  TensorNearMatcher(at::Tensor expected, double rtol, double atol)
      : expected_(std::move(expected)), rtol_(rtol), atol_(atol) {}
  bool MatchAndExplain(const at::Tensor& actual, std::ostream* os) const;
  void DescribeTo(std::ostream* os) const;
  void DescribeNegationTo(std::ostream* os) const;

 private:
  at::Tensor expected_;
  double rtol_, atol_;
};

class MatchesEagerWithFp64ReferenceMatcher {
 public:
  using is_gtest_matcher = void;
  MatchesEagerWithFp64ReferenceMatcher(at::Tensor eager, at::Tensor fp64, AccuracyOptions options)
      : eager_(std::move(eager)), fp64_(std::move(fp64)), options_(options) {}
  bool MatchAndExplain(const at::Tensor& compiled, std::ostream* os) const;
  void DescribeTo(std::ostream* os) const;
  void DescribeNegationTo(std::ostream* os) const;

 private:
  at::Tensor eager_, fp64_;
  AccuracyOptions options_;
};

// TensorNear: same dtype and shape, and every element within atol + rtol * |expected|
// (NaNs equal).
inline ::testing::Matcher<const at::Tensor&> TensorNear(at::Tensor expected, double rtol, double atol) {
  return TensorNearMatcher(std::move(expected), rtol, atol);
}

// MatchesEagerWithFp64Reference: the compiled tensor passes the accuracy rule
// (harness/check/accuracy_rule.h) against eager, judged by the float64 reference.
inline ::testing::Matcher<const at::Tensor&> MatchesEagerWithFp64Reference(
    at::Tensor eager, at::Tensor fp64, AccuracyOptions options = {}) {
  return MatchesEagerWithFp64ReferenceMatcher(std::move(eager), std::move(fp64), options);
}

// ModeName: "the fp64-RMSE rule", "strict allclose", "assert_close tolerances".
std::string ModeName(const AccuracyOptions& options);

}  // namespace aoti
