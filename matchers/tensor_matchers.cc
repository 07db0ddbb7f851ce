#include "matchers/tensor_matchers.h"

#include <cstdio>

#include "harness/archive/tensor_io.h"

namespace aoti {
namespace {

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

}  // namespace

std::string ModeName(const AccuracyOptions& options) {
  switch (options.mode) {
    case AccuracyMode::kFp64Rmse: return "the fp64-RMSE rule (tol " + Num(options.tol) + ")";
    case AccuracyMode::kStrict: return "strict allclose (tol " + Num(options.tol) + ")";
    case AccuracyMode::kAssertClose: return "assert_close tolerances";
    case AccuracyMode::kSqnr: return "SQNR against eager (at least " + Num(options.min_sqnr_db) + " dB)";
  }
  return "";
}

bool TensorNearMatcher::MatchAndExplain(const at::Tensor& actual, std::ostream* os) const {
  const TensorComparison c = CompareElements(actual, expected_, at::Tensor(), rtol_, atol_);
  if (c.reason.empty() && c.mismatched == 0) {
    if (os) *os << "which is within tolerance";
    return true;
  }
  if (!os) return false;
  if (!c.reason.empty()) {
    *os << "which has a " << c.reason;
    return false;
  }
  char pct[32];
  std::snprintf(pct, sizeof(pct), "%.1f%%", 100.0 * c.mismatched / c.numel);
  *os << "which has " << c.mismatched << " / " << c.numel << " mismatched elements (" << pct
      << "), the greatest absolute difference " << Num(c.max_abs_diff) << " at index "
      << FormatIndex(c.max_abs_index) << " (got " << Num(c.got) << ", expected " << Num(c.eager)
      << "), and the greatest relative difference " << Num(c.max_rel_diff) << " at index "
      << FormatIndex(c.max_rel_index);
  return false;
}

void TensorNearMatcher::DescribeTo(std::ostream* os) const {
  *os << "is a " << DescribeTensor(expected_) << " tensor within rtol " << Num(rtol_) << " and atol "
      << Num(atol_) << " of the expected values";
}

void TensorNearMatcher::DescribeNegationTo(std::ostream* os) const {
  *os << "is not a " << DescribeTensor(expected_) << " tensor within rtol " << Num(rtol_)
      << " and atol " << Num(atol_) << " of the expected values";
}

bool MatchesEagerWithFp64ReferenceMatcher::MatchAndExplain(const at::Tensor& compiled,
                                                           std::ostream* os) const {
  const TensorComparison c = CompareOutputs(compiled, eager_, fp64_, options_);
  if (os) *os << "which " << (c.pass ? "passes: " : "fails: ") << DescribeComparison(c, options_);
  return c.pass;
}

void MatchesEagerWithFp64ReferenceMatcher::DescribeTo(std::ostream* os) const {
  *os << "matches the eager " << DescribeTensor(eager_) << " under " << ModeName(options_);
}

void MatchesEagerWithFp64ReferenceMatcher::DescribeNegationTo(std::ostream* os) const {
  *os << "does not match the eager " << DescribeTensor(eager_) << " under " << ModeName(options_);
}

}  // namespace aoti
