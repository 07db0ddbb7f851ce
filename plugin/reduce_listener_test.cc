// The reduction budget inside Bazel's timeout: what TEST_TIMEOUT leaves, less a margin.
#include "plugin/reduce_listener.h"

#include <gtest/gtest.h>

namespace aoti {
namespace {

TEST(ReductionBudget, AFlagWins) {
  EXPECT_EQ(ReductionBudgetSeconds(42, "300", 10), 42);
  EXPECT_EQ(ReductionBudgetSeconds(42, nullptr, 10), 42);
}

TEST(ReductionBudget, OutsideBazelThereIsNone) {
  EXPECT_EQ(ReductionBudgetSeconds(0, nullptr, 10), 0);
  EXPECT_EQ(ReductionBudgetSeconds(0, "", 10), 0);
}

TEST(ReductionBudget, WhatTheTestTimeoutLeavesLessAMargin) {
  // 300 s timeout, 20 s spent: 10% (30 s) margin leaves 250 s.
  EXPECT_DOUBLE_EQ(ReductionBudgetSeconds(0, "300", 20), 250);
  // 3600 s (eternal): the margin is 10%, 360 s.
  EXPECT_DOUBLE_EQ(ReductionBudgetSeconds(0, "3600", 0), 3240);
  // 60 s (short): the margin is at least 30 s.
  EXPECT_DOUBLE_EQ(ReductionBudgetSeconds(0, "60", 10), 20);
}

TEST(ReductionBudget, NothingLeftIsNegative) {
  EXPECT_LT(ReductionBudgetSeconds(0, "60", 45), 0);
}

TEST(ReductionBudget, AMalformedTimeoutIsIgnored) {
  EXPECT_EQ(ReductionBudgetSeconds(0, "soon", 10), 0);
  EXPECT_EQ(ReductionBudgetSeconds(0, "-5", 10), 0);
  EXPECT_EQ(ReductionBudgetSeconds(0, "300s", 10), 0);
}

}  // namespace
}  // namespace aoti
