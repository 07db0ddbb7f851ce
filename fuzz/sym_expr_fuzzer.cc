// Size expressions as a program carries them (a SymInt's as_expr.expr_str, sympy's srepr):
// parsed and evaluated with every symbol bound to an edge of int64 or a small value, so that
// overflow, division and deep nesting are reached; never a crash, a trap, a hang or UB.
#include <climits>
#include <cstdint>
#include <map>
#include <string>

#include "fuzz/fuzz_util.h"
#include "harness/program/sym_expr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = aoti::AsString(data, size);
  static constexpr int64_t kValues[] = {0, 1, -1, 2, 7, INT64_MAX, INT64_MIN, 4294967296};
  std::map<std::string, int64_t> values;
  size_t k = 0;
  for (const std::string& symbol : aoti::SymbolsIn(text)) values[symbol] = kValues[k++ % 8];
  std::string why;
  (void)aoti::EvaluateSymExpr(text, values, &why);
  (void)aoti::EvaluateSymExpr(text, {});
  return 0;
}
