// Symbolic sizes as torch.export writes them (sympy's srepr), evaluated with their symbols bound.
#include "harness/program/sym_expr.h"

#include <climits>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace aoti {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(SymExpr, ThePlainSymbolsExportWrites) {
  EXPECT_EQ(EvaluateSymExpr("Symbol('u0', integer=True)", {{"u0", 5}}), 5);
  EXPECT_EQ(EvaluateSymExpr("Symbol('s77', positive=True, integer=True)", {{"s77", 12}}), 12);
  EXPECT_EQ(EvaluateSymExpr("u0", {{"u0", 3}}), 3);
  EXPECT_EQ(EvaluateSymExpr("Integer(7)", {}), 7);
}

TEST(SymExpr, Arithmetic) {
  const std::map<std::string, int64_t> v{{"u0", 5}, {"s0", 4}};
  EXPECT_EQ(EvaluateSymExpr("Mul(Integer(2), Symbol('u0', integer=True))", v), 10);
  EXPECT_EQ(EvaluateSymExpr("Add(Symbol('u0', integer=True), Integer(-1))", v), 4);
  EXPECT_EQ(EvaluateSymExpr("Mul(Symbol('s0', integer=True), Symbol('u0', integer=True), Integer(3))", v), 60);
  EXPECT_EQ(EvaluateSymExpr("FloorDiv(Symbol('u0', integer=True), Integer(2))", v), 2);
  EXPECT_EQ(EvaluateSymExpr("FloorDiv(Integer(-5), Integer(2))", v), -3);
  EXPECT_EQ(EvaluateSymExpr("PythonMod(Integer(-5), Integer(3))", v), 1);
  EXPECT_EQ(EvaluateSymExpr("Max(Integer(1), Symbol('u0', integer=True))", v), 5);
  EXPECT_EQ(EvaluateSymExpr("Pow(Symbol('s0', integer=True), Integer(2))", v), 16);
}

TEST(SymExpr, WhatItCannotSayIsNotGuessed) {
  EXPECT_EQ(EvaluateSymExpr("Symbol('u1', integer=True)", {{"u0", 1}}), std::nullopt);      // not bound
  EXPECT_EQ(EvaluateSymExpr("Rational(1, 2)", {}), std::nullopt);                          // not known
  EXPECT_EQ(EvaluateSymExpr("CleanDiv(Integer(5), Integer(2))", {}), std::nullopt);        // not exact
  EXPECT_EQ(EvaluateSymExpr("FloorDiv(Integer(5), Integer(0))", {}), std::nullopt);
  EXPECT_EQ(EvaluateSymExpr("Mul(Integer(2), ", {}), std::nullopt);                        // malformed
  EXPECT_EQ(EvaluateSymExpr("", {}), std::nullopt);
}

// Every step checked: a value that does not fit in 64 bits, or is not defined, is refused
// with the reason, never wrapped, never a trap (INT64_MIN / -1), never a long loop (Pow).
TEST(SymExpr, OverflowAndUndefinedStepsAreRefusedWithTheirReason) {
  const std::string min = std::to_string(INT64_MIN), max = std::to_string(INT64_MAX);
  struct Row {
    std::string expr;
    std::string why;
  };
  for (const Row& row : std::vector<Row>{
           {"Add(Integer(" + max + "), Integer(1))", "Add overflows 64 bits (" + max + ", 1)"},
           {"Mul(Integer(4294967296), Integer(4294967296))", "Mul overflows 64 bits"},
           {"Pow(Integer(2), Integer(63))", "Pow overflows 64 bits"},
           {"Pow(Integer(3), Integer(" + max + "))", "Pow overflows 64 bits"},
           {"Pow(Integer(2), Integer(-1))", "Pow with a negative exponent"},
           {"FloorDiv(Integer(" + min + "), Integer(-1))", "FloorDiv overflows 64 bits"},
           {"FloorDiv(Integer(1), Integer(0))", "FloorDiv by zero"},
           {"PythonMod(Integer(1), Integer(0))", "PythonMod by zero"},
           {"CleanDiv(Integer(" + min + "), Integer(-1))", "CleanDiv overflows 64 bits"},
       }) {
    SCOPED_TRACE(row.expr);
    std::string why;
    EXPECT_EQ(EvaluateSymExpr(row.expr, {}, &why), std::nullopt);
    EXPECT_THAT(why, ::testing::HasSubstr(row.why));
    EXPECT_THAT(why, ::testing::HasSubstr(" in " + row.expr.substr(0, 10)));
  }
}

TEST(SymExpr, TheEdgesThatFitAreExact) {
  const std::string min = std::to_string(INT64_MIN), max = std::to_string(INT64_MAX);
  EXPECT_EQ(EvaluateSymExpr("Pow(Integer(2), Integer(62))", {}), int64_t{1} << 62);
  EXPECT_EQ(EvaluateSymExpr("Pow(Integer(-2), Integer(63))", {}), INT64_MIN);
  EXPECT_EQ(EvaluateSymExpr("Pow(Integer(1), Integer(" + max + "))", {}), 1);   // at once, not 2^63 steps
  EXPECT_EQ(EvaluateSymExpr("Pow(Integer(-1), Integer(" + max + "))", {}), -1);
  EXPECT_EQ(EvaluateSymExpr("Pow(Integer(0), Integer(0))", {}), 1);
  EXPECT_EQ(EvaluateSymExpr("Pow(Integer(7), Integer(0))", {}), 1);
  EXPECT_EQ(EvaluateSymExpr("PythonMod(Integer(" + min + "), Integer(-1))", {}), 0);
  EXPECT_EQ(EvaluateSymExpr("PythonMod(Integer(" + min + "), Integer(" + max + "))", {}), INT64_MAX - 1);
  EXPECT_EQ(EvaluateSymExpr("FloorDiv(Integer(" + min + "), Integer(" + max + "))", {}), -2);
  EXPECT_EQ(EvaluateSymExpr("FloorDiv(Integer(" + max + "), Integer(-1))", {}), -INT64_MAX);
  EXPECT_EQ(EvaluateSymExpr("Add(Integer(" + max + "), Integer(" + min + "))", {}), -1);
  EXPECT_EQ(EvaluateSymExpr("Mul(Integer(-1), Integer(" + max + "))", {}), -INT64_MAX);
}

TEST(SymExpr, ADeeplyNestedExpressionIsRefusedNotRecursedInto) {
  auto nested = [](int n) {
    std::string e;
    for (int k = 0; k < n; ++k) e += "Add(";
    e += "Symbol('u0', integer=True)";
    for (int k = 0; k < n; ++k) e += ", Integer(1))";
    return e;
  };
  const std::string deep = nested(100000);
  std::string why;
  EXPECT_EQ(EvaluateSymExpr(deep, {{"u0", 1}}, &why), std::nullopt);
  EXPECT_THAT(why, ::testing::HasSubstr("nests deeper than 200 calls"));
  EXPECT_THAT(SymbolsIn(deep), IsEmpty());
  EXPECT_EQ(EvaluateSymExpr(nested(150), {{"u0", 1}}), 151);
}

TEST(SymExpr, SymbolsIn) {
  EXPECT_THAT(SymbolsIn("Mul(Integer(2), Symbol('u0', integer=True), Symbol('s77', positive=True))"),
              ElementsAre("s77", "u0"));
  EXPECT_THAT(SymbolsIn("u3"), ElementsAre("u3"));
  EXPECT_THAT(SymbolsIn("Integer(4)"), IsEmpty());
}

}  // namespace
}  // namespace aoti
