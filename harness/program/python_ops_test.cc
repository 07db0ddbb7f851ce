// The Python scalar operators on SymInts: Python's meaning where 64 bits hold the answer, a
// HarnessError naming the operator and its operands where they do not; never a wrong value,
// a trap (INT64_MIN // -1) or undefined behaviour (a shift of 64).
#include "harness/program/python_ops.h"

#include <climits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/util/errors.h"

namespace aoti {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

c10::IValue Op(const std::string& op, std::vector<c10::IValue> a) { return ApplyPythonOp(op, a, "node 'sym'"); }
int64_t Int(const std::string& op, std::vector<c10::IValue> a) { return Op(op, std::move(a)).toInt(); }

std::string Refusal(const std::string& op, std::vector<c10::IValue> a) {
  try {
    Op(op, std::move(a));
  } catch (const HarnessError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PythonOps, FloorDivisionAndModuloFollowPython) {
  EXPECT_EQ(Int("floordiv", {int64_t{-7}, int64_t{2}}), -4);
  EXPECT_EQ(Int("mod", {int64_t{-7}, int64_t{2}}), 1);
  EXPECT_EQ(Int("mod", {int64_t{7}, int64_t{-2}}), -1);
  EXPECT_EQ(Int("floordiv", {int64_t{7}, int64_t{-1}}), -7);
  EXPECT_EQ(Int("mod", {INT64_MIN, int64_t{-1}}), 0);
  EXPECT_EQ(Int("floordiv", {INT64_MIN, INT64_MAX}), -2);
  EXPECT_EQ(Int("mod", {INT64_MIN, INT64_MAX}), INT64_MAX - 1);
  EXPECT_DOUBLE_EQ(Op("floordiv", {-7.0, 2.0}).toDouble(), -4.0);
  EXPECT_DOUBLE_EQ(Op("truediv", {int64_t{7}, int64_t{2}}).toDouble(), 3.5);
}

TEST(PythonOps, ComparisonsOfIntsAreExactPast53Bits) {
  const int64_t big = (int64_t{1} << 53) + 1, next = big + 1;  // equal as doubles
  ASSERT_EQ(static_cast<double>(big), static_cast<double>(big - 1));
  EXPECT_FALSE(Op("eq", {big, big - 1}).toBool());
  EXPECT_TRUE(Op("ne", {big, big - 1}).toBool());
  EXPECT_TRUE(Op("lt", {big, next}).toBool());
  EXPECT_FALSE(Op("ge", {big, next}).toBool());
  EXPECT_EQ(Int("sym_max", {big, big - 1}), big);
}

TEST(PythonOps, PowersAreExactIntegers) {
  EXPECT_EQ(Int("pow", {int64_t{3}, int64_t{39}}), 4052555153018976267);  // past 2^53: a double would round
  EXPECT_EQ(Int("pow", {int64_t{-2}, int64_t{63}}), INT64_MIN);
  EXPECT_EQ(Int("pow", {int64_t{-1}, INT64_MAX}), -1);  // at once
  EXPECT_DOUBLE_EQ(Op("pow", {int64_t{2}, int64_t{-1}}).toDouble(), 0.5);
}

TEST(PythonOps, ShiftsFollowPythonWhereTheyFit) {
  EXPECT_EQ(Int("lshift", {int64_t{1}, int64_t{62}}), int64_t{1} << 62);
  EXPECT_EQ(Int("lshift", {int64_t{-1}, int64_t{63}}), INT64_MIN);
  EXPECT_EQ(Int("lshift", {int64_t{0}, int64_t{1000}}), 0);
  EXPECT_EQ(Int("rshift", {int64_t{-5}, int64_t{1}}), -3);
  EXPECT_EQ(Int("rshift", {int64_t{-5}, int64_t{64}}), -1);
  EXPECT_EQ(Int("rshift", {int64_t{5}, int64_t{200}}), 0);
}

// What 64 bits cannot hold, or Python refuses: an error that names the node, the operator
// and its operands.
TEST(PythonOps, WhatDoesNotFitIsRefusedAndNamed) {
  const std::string min = std::to_string(INT64_MIN), max = std::to_string(INT64_MAX);
  EXPECT_THAT(Refusal("add", {INT64_MAX, int64_t{1}}),
              AllOf(HasSubstr("node 'sym': Python operator 'add'(" + max + ", 1)"), HasSubstr("does not fit in 64 bits")));
  EXPECT_THAT(Refusal("sub", {INT64_MIN, int64_t{1}}), HasSubstr("does not fit in 64 bits"));
  EXPECT_THAT(Refusal("mul", {int64_t{1} << 32, int64_t{1} << 32}), HasSubstr("does not fit in 64 bits"));
  EXPECT_THAT(Refusal("neg", {INT64_MIN}), HasSubstr("does not fit in 64 bits"));
  EXPECT_THAT(Refusal("floordiv", {INT64_MIN, int64_t{-1}}),
              AllOf(HasSubstr("'floordiv'(" + min + ", -1)"), HasSubstr("does not fit in 64 bits")));
  EXPECT_THAT(Refusal("floordiv", {int64_t{1}, int64_t{0}}), HasSubstr("integer division by zero"));
  EXPECT_THAT(Refusal("mod", {1.5, 0.0}), HasSubstr("float division by zero"));
  EXPECT_THAT(Refusal("truediv", {int64_t{1}, int64_t{0}}), HasSubstr("division by zero"));
  EXPECT_THAT(Refusal("pow", {int64_t{2}, int64_t{63}}), HasSubstr("does not fit in 64 bits"));
  EXPECT_THAT(Refusal("pow", {int64_t{3}, INT64_MAX}), HasSubstr("does not fit in 64 bits"));
  EXPECT_THAT(Refusal("lshift", {int64_t{1}, int64_t{64}}), HasSubstr("does not fit in 64 bits"));
  EXPECT_THAT(Refusal("lshift", {int64_t{3}, int64_t{62}}), HasSubstr("does not fit in 64 bits"));
  EXPECT_THAT(Refusal("rshift", {int64_t{1}, int64_t{-1}}), HasSubstr("negative shift count"));
  EXPECT_THAT(Refusal("sym_int", {1e300}), HasSubstr("does not fit in 64 bits"));
  EXPECT_THAT(Refusal("and_", {1.5, int64_t{1}}), HasSubstr("expected ints or bools"));
  EXPECT_THAT(Refusal("add", {int64_t{1}}), HasSubstr("expected 2 operands, got 1"));
  EXPECT_THAT(Refusal("matmul", {int64_t{1}, int64_t{2}}), HasSubstr("not supported"));
}

TEST(PythonOps, BoolsAreIntsAndSymBoolsStayBools) {
  EXPECT_EQ(Int("add", {true, true}), 2);
  EXPECT_TRUE(Op("and_", {true, true}).isBool());
  EXPECT_EQ(Int("and_", {int64_t{6}, int64_t{3}}), 2);
  EXPECT_EQ(Int("sym_ite", {false, int64_t{1}, int64_t{2}}), 2);
}

}  // namespace
}  // namespace aoti
