// The matchers' Describe and Explain text, word for word.
#include "matchers/tensor_matchers.h"

#include <sstream>

#include <ATen/ops/tensor.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace aoti {
namespace {

template <typename M>
std::string Describe(const M& m) {
  std::ostringstream os;
  m.DescribeTo(&os);
  return os.str();
}

template <typename M>
std::string DescribeNegation(const M& m) {
  std::ostringstream os;
  m.DescribeNegationTo(&os);
  return os.str();
}

template <typename M>
std::string Explain(const M& m, const at::Tensor& t) {
  std::ostringstream os;
  m.MatchAndExplain(t, &os);
  return os.str();
}

const at::Tensor kExpected = at::tensor({1.0f, 2.0f, 3.0f, 4.0f}).reshape({2, 2});

TEST(TensorNear, DescribesItself) {
  TensorNearMatcher m(kExpected, 1e-5, 1e-8);
  EXPECT_EQ(Describe(m), "is a float32[2, 2] tensor within rtol 1e-05 and atol 1e-08 of the expected values");
  EXPECT_EQ(DescribeNegation(m),
            "is not a float32[2, 2] tensor within rtol 1e-05 and atol 1e-08 of the expected values");
}

TEST(TensorNear, ExplainsAMismatch) {
  TensorNearMatcher m(kExpected, 1e-5, 1e-8);
  const at::Tensor got = at::tensor({1.0f, 2.0f, 3.0f, 4.5f}).reshape({2, 2});
  EXPECT_FALSE(m.MatchAndExplain(got, nullptr));
  EXPECT_EQ(Explain(m, got),
            "which has 1 / 4 mismatched elements (25.0%), the greatest absolute difference 0.5 at "
            "index (1, 1) (got 4.5, expected 4), and the greatest relative difference 0.125 at index (1, 1)");
  EXPECT_EQ(Explain(m, kExpected), "which is within tolerance");
  EXPECT_EQ(Explain(m, kExpected.to(at::kDouble)), "which has a dtype mismatch: got Double, expected Float");
  EXPECT_THAT(kExpected.clone(), TensorNear(kExpected, 0, 0));
}

TEST(MatchesEagerWithFp64Reference, DescribesAndExplains) {
  const at::Tensor eager = at::tensor({1.0f, 2.0f, 3.0f, 4.0f});
  const at::Tensor fp64 = at::tensor({1.0, 2.0, 3.0, 4.0});
  MatchesEagerWithFp64ReferenceMatcher m(eager, fp64, AccuracyOptions{});
  EXPECT_EQ(Describe(m), "matches the eager float32[4] under the fp64-RMSE rule (tol 0.001)");
  EXPECT_EQ(DescribeNegation(m), "does not match the eager float32[4] under the fp64-RMSE rule (tol 0.001)");
  const at::Tensor compiled = at::tensor({1.0f, 2.0f, 3.0f, 4.5f});
  EXPECT_EQ(Explain(m, compiled),
            "which fails: RMSE against float64 exceeds the bound\n"
            "  Mismatched elements: 1 / 4 (25.0%)\n"
            "  Greatest absolute difference: 0.5 at index (3) (up to 0.001 allowed)\n"
            "  Greatest relative difference: 0.125 at index (3) (up to 0.001 allowed)\n"
            "  At index (3): compiled 4.5, eager 4, fp64 4\n"
            "  RMSE(compiled, fp64) = 0.25 > bound 0.0001 = 3 * RMSE(eager, fp64) 0 + tol/10 0.0001");
  EXPECT_THAT(eager.clone(), MatchesEagerWithFp64Reference(eager, fp64));
  EXPECT_THAT(compiled, ::testing::Not(MatchesEagerWithFp64Reference(eager, fp64)));
}

}  // namespace
}  // namespace aoti
