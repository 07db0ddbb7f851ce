// Symbolic sizes as torch.export writes them (sympy's srepr), evaluated with their symbols bound.
#include "harness/program/sym_expr.h"

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

TEST(SymExpr, SymbolsIn) {
  EXPECT_THAT(SymbolsIn("Mul(Integer(2), Symbol('u0', integer=True), Symbol('s77', positive=True))"),
              ElementsAre("s77", "u0"));
  EXPECT_THAT(SymbolsIn("u3"), ElementsAre("u3"));
  EXPECT_THAT(SymbolsIn("Integer(4)"), IsEmpty());
}

}  // namespace
}  // namespace aoti
