#include "harness/program/python_ops.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "harness/util/errors.h"

namespace aoti {

const std::set<std::string>& PythonOps() {
  static const auto* ops = new std::set<std::string>{
      "add", "sub", "mul", "floordiv", "truediv", "mod", "neg", "pos", "pow", "trunc",
      "eq", "ne", "lt", "le", "gt", "ge", "and_", "or_", "not_", "lshift", "rshift",
      // torch's symbolic helpers (targets torch.sym_max, ...), as the serializer knows them
      "sym_max", "sym_min", "sym_not", "sym_ite", "sym_float", "sym_int", "_sym_sqrt"};
  return *ops;
}

namespace {

std::string Shown(const c10::IValue& v) {
  if (v.isInt()) return std::to_string(v.toInt());
  if (v.isBool()) return v.toBool() ? "True" : "False";
  if (v.isDouble()) return std::to_string(v.toDouble());
  return v.tagKind();
}

[[noreturn]] void Refuse(const std::string& where, const std::string& op, const std::vector<c10::IValue>& a,
                         const std::string& why) {
  std::string operands;
  for (const auto& v : a) operands += (operands.empty() ? "" : ", ") + Shown(v);
  throw HarnessError(where + ": Python operator '" + op + "'(" + operands + "): " + why);
}

}  // namespace

c10::IValue ApplyPythonOp(const std::string& op, const std::vector<c10::IValue>& a, const std::string& where) {
  for (const auto& v : a) {
    if (!v.isInt() && !v.isBool() && !v.isDouble()) Refuse(where, op, a, "expected ints, bools or floats");
  }
  auto num = [](const c10::IValue& v) { return v.isInt() ? static_cast<double>(v.toInt()) : v.isBool() ? v.toBool() : v.toDouble(); };
  const bool ints = std::all_of(a.begin(), a.end(), [](const c10::IValue& v) { return v.isInt() || v.isBool(); });
  auto as_int = [](const c10::IValue& v) { return v.isInt() ? v.toInt() : static_cast<int64_t>(v.toBool()); };
  auto truthy = [&](const c10::IValue& v) { return v.isBool() ? v.toBool() : num(v) != 0; };
  const auto too_big = [&]() { Refuse(where, op, a, "the result does not fit in 64 bits (Python's ints would grow)"); };
  // A float to an int, as Python's int() truncates; past 64 bits, refused.
  auto to_int = [&](double d) {
    if (!std::isfinite(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0) too_big();
    return static_cast<int64_t>(std::trunc(d));
  };
  if (a.empty()) Refuse(where, op, a, "expected operands, got none");
  if (op == "neg") {
    if (!ints) return c10::IValue(-num(a[0]));
    if (as_int(a[0]) == INT64_MIN) too_big();
    return c10::IValue(-as_int(a[0]));
  }
  if (op == "pos") return a[0];
  if (op == "not_" || op == "sym_not") return c10::IValue(!truthy(a[0]));
  if (op == "trunc" || op == "sym_int") return ints ? c10::IValue(as_int(a[0])) : c10::IValue(to_int(num(a[0])));
  if (op == "sym_float") return c10::IValue(num(a[0]));
  if (op == "_sym_sqrt") return c10::IValue(std::sqrt(num(a[0])));
  if (op == "sym_ite") {
    if (a.size() != 3) Refuse(where, op, a, "expected 3 operands, got " + std::to_string(a.size()));
    return truthy(a[0]) ? a[1] : a[2];
  }
  if (a.size() != 2) Refuse(where, op, a, "expected 2 operands, got " + std::to_string(a.size()));
  const double x = num(a[0]), y = num(a[1]);
  const int64_t i = ints ? as_int(a[0]) : 0, j = ints ? as_int(a[1]) : 0;
  int64_t r = 0;
  if (op == "add") {
    if (ints && __builtin_add_overflow(i, j, &r)) too_big();
    return ints ? c10::IValue(r) : c10::IValue(x + y);
  }
  if (op == "sub") {
    if (ints && __builtin_sub_overflow(i, j, &r)) too_big();
    return ints ? c10::IValue(r) : c10::IValue(x - y);
  }
  if (op == "mul") {
    if (ints && __builtin_mul_overflow(i, j, &r)) too_big();
    return ints ? c10::IValue(r) : c10::IValue(x * y);
  }
  if (op == "truediv") {
    if (y == 0) Refuse(where, op, a, "division by zero (Python raises ZeroDivisionError)");
    return c10::IValue(x / y);
  }
  if (op == "floordiv" || op == "mod") {
    if (y == 0) Refuse(where, op, a, std::string(ints ? "integer" : "float") + " division by zero (Python raises ZeroDivisionError)");
    if (ints) {
      if (j == -1) {  // INT64_MIN // -1 does not fit, and the CPU traps on it
        if (op == "mod") return c10::IValue(int64_t{0});
        if (i == INT64_MIN) too_big();
        return c10::IValue(-i);
      }
      const int64_t q = i / j, rem = i % j;
      const bool signs_differ = rem != 0 && ((rem < 0) != (j < 0));  // Python floors
      return op == "floordiv" ? c10::IValue(signs_differ ? q - 1 : q) : c10::IValue(signs_differ ? rem + j : rem);
    }
    const double d = std::floor(x / y);
    return op == "floordiv" ? c10::IValue(d) : c10::IValue(x - d * y);
  }
  if (op == "pow") {
    if (!ints || j < 0) return c10::IValue(std::pow(x, y));  // Python: a float for a negative exponent
    int64_t base = i, e = j, out = 1;
    if (base == 0 || base == 1) return c10::IValue(e == 0 ? int64_t{1} : base);
    if (base == -1) return c10::IValue(e % 2 == 0 ? int64_t{1} : int64_t{-1});
    while (e > 0) {  // by squaring: at most 64 steps
      if ((e & 1) && __builtin_mul_overflow(out, base, &out)) too_big();
      e >>= 1;
      if (e > 0 && __builtin_mul_overflow(base, base, &base)) too_big();
    }
    return c10::IValue(out);
  }
  // Comparisons: two ints exactly (not through a double, which holds 53 bits).
  if (op == "eq") return c10::IValue(ints ? i == j : x == y);
  if (op == "ne") return c10::IValue(ints ? i != j : x != y);
  if (op == "lt") return c10::IValue(ints ? i < j : x < y);
  if (op == "le") return c10::IValue(ints ? i <= j : x <= y);
  if (op == "gt") return c10::IValue(ints ? i > j : x > y);
  if (op == "ge") return c10::IValue(ints ? i >= j : x >= y);
  const bool bools = a[0].isBool() && a[1].isBool();  // SymBool & SymBool is a bool
  if (op == "and_" || op == "or_" || op == "lshift" || op == "rshift") {
    if (!ints) Refuse(where, op, a, "expected ints or bools");
  }
  if (op == "and_") return bools ? c10::IValue(a[0].toBool() && a[1].toBool()) : c10::IValue(i & j);
  if (op == "or_") return bools ? c10::IValue(a[0].toBool() || a[1].toBool()) : c10::IValue(i | j);
  if (op == "lshift" || op == "rshift") {
    if (j < 0) Refuse(where, op, a, "negative shift count (Python raises ValueError)");
    if (op == "rshift") return c10::IValue(j >= 64 ? (i < 0 ? int64_t{-1} : int64_t{0}) : (i >> j));  // arithmetic
    if (i == 0) return c10::IValue(int64_t{0});
    // i << j fits when i * 2^j does.
    if (j >= 64 || i > (INT64_MAX >> j) || i < (INT64_MIN >> j)) too_big();
    return c10::IValue(static_cast<int64_t>(static_cast<uint64_t>(i) << j));
  }
  if (op == "sym_max") return ints ? c10::IValue(std::max(i, j)) : c10::IValue(std::max(x, y));
  if (op == "sym_min") return ints ? c10::IValue(std::min(i, j)) : c10::IValue(std::min(x, y));
  Refuse(where, op, a, "not supported");
}

}  // namespace aoti
