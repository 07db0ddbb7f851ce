// ReduceOnFailureListener: after a test whose AOTI check failed, reduce each recorded
// failing case and write the repro next to it, in $TEST_UNDECLARED_OUTPUTS_DIR/aoti/
// <Suite.Test>/repro/ (CI uploads test.outputs/outputs.zip), plus a Bazel test annotation
// and a line on stderr that points there.
//
// When it acts follows PyTorch's names: it is on with --aoti_reduce_on_failure or
// DUMP_AOTI_MINIFIER=1; AOTINDUCTOR_REPRO_LEVEL (or --aoti_repro_level) says for which
// failures: 1 compile failures only, 2 (default) any failure, 3 any failure (the case
// itself is always written before reducing), 4 accuracy failures only.
//
// Inside Bazel the reduction must end before the test's own timeout kills it: unless
// --aoti_reduce_time_budget_s sets a budget, each reduction gets what is left of
// TEST_TIMEOUT, less a margin for writing the artifacts (ReductionBudgetSeconds). When the
// budget is spent, the best repro so far is written and labelled as such.
#pragma once

#include <string>

#include <gtest/gtest.h>

namespace aoti {

// ReductionBudgetSeconds: flag_s when positive; else, when test_timeout (Bazel's
// TEST_TIMEOUT, seconds) is set, test_timeout - elapsed_s - margin, where the margin is
// 10% of the timeout and at least 30 s; else 0 (no budget). Negative means no time is
// left to reduce at all. A test_timeout that is not a positive number is ignored.
double ReductionBudgetSeconds(double flag_s, const char* test_timeout, double elapsed_s);

class ReduceOnFailureListener : public ::testing::EmptyTestEventListener {
 public:
  void OnTestEnd(const ::testing::TestInfo& info) override;
};

}  // namespace aoti
