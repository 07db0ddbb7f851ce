// Symbolic sizes as torch.export writes them: sympy's srepr of an expression
// ("Symbol('u0', integer=True)", "Mul(Integer(2), Symbol('s77', positive=True, integer=True))")
// in a SymInt's as_expr.expr_str. The graph editor evaluates one with its symbols bound to
// what a recorded run observed, to specialise a data-dependent size it cuts away from.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace aoti {

// SymbolsIn: the names of the symbols an expression mentions ("u0", "s77"); a bare name
// ("u0", as DimSpec holds a plain symbol) is itself.
std::set<std::string> SymbolsIn(const std::string& expr);

// EvaluateSymExpr: the expression's value with `values` bound; nullopt when it names a
// symbol not bound, or a function other than Integer, Symbol, Add, Mul, Pow, FloorDiv,
// CleanDiv, Mod, PythonMod, Max and Min, is not well formed or nests deeper than
// kMaxSymExprDepth, or when a step's value does not fit in 64 bits (overflow, division by
// zero, INT64_MIN / -1, a negative exponent): never a wrong value, a hang or a signal. `why`
// (when given) gets the reason, naming the step.
constexpr int kMaxSymExprDepth = 200;
std::optional<int64_t> EvaluateSymExpr(const std::string& expr, const std::map<std::string, int64_t>& values,
                                       std::string* why = nullptr);

}  // namespace aoti
