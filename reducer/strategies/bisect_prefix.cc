// bisect_prefix: the shortest failing prefix of the program in topological order, by
// binary search (log2(N) compiles where upstream's truncate_suffix walks the prefixes).
// A prefix returns what its last node makes (as upstream's truncate_suffix does), so no
// other intermediate is exposed and a different bug upstream cannot take over. The
// engine's Bisect keeps the invariant "prefix hi fails", so a non-monotone failure still
// ends at a failing prefix.
#include "reducer/graph_edit.h"
#include "reducer/strategies/strategy.h"

namespace aoti {

bool BisectPrefix(ReductionState& state) {
  const Program p = state.current();
  const size_t n = p.nodes.size();
  if (n <= 1) return false;
  auto prefix = [&p](size_t k) {
    std::vector<bool> keep(p.nodes.size(), false);
    for (size_t i = 0; i < k; ++i) keep[i] = true;
    return KeepNodes(p, keep, OutputMode::kLast);
  };
  const size_t k = state.Bisect(1, n, prefix);
  if (k >= n) return false;
  return state.TryInOrder({{"kept the first " + std::to_string(k) + " nodes", [&] { return prefix(k); }}},
                          "bisect_prefix") == 0;
}

}  // namespace aoti
