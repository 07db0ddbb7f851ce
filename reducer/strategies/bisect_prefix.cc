// bisect_prefix: the shortest failing prefix of the program in topological order, by
// binary search (log2(N) compiles where upstream's truncate_suffix walks the prefixes).
// A prefix returns what its last node makes (as upstream's truncate_suffix does), so no
// other intermediate is exposed and a different bug upstream cannot take over. The
// search keeps the invariant "prefix hi fails", so a non-monotone failure still
// ends at a failing prefix.
#include "reducer/graph_edit.h"
#include "reducer/strategies/strategy.h"

namespace aoti {

namespace {

Program Prefix(const Program& p, size_t k) {
  std::vector<bool> keep(p.nodes.size(), false);
  for (size_t i = 0; i < k; ++i) keep[i] = true;
  return KeepNodes(p, keep, OutputMode::kLast);
}

}  // namespace

bool BisectPrefix(ReductionState& state) {
  const Program& p = state.current();
  const size_t n = p.nodes.size();
  if (n <= 1) return false;
  size_t lo = 1, hi = n;
  while (lo < hi && !state.OutOfTime()) {
    const size_t mid = lo + (hi - lo) / 2;
    bool fails = false;
    try {
      fails = state.Fails(Prefix(p, mid));
    } catch (const EditRefused& e) {
      state.Progress("  prefix of " + std::to_string(mid) + " nodes cannot be built: " + e.what());
    }
    if (fails) hi = mid;
    else lo = mid + 1;
  }
  if (hi >= n) return false;
  return state.Try(Prefix(p, hi), "bisect_prefix", "kept the first " + std::to_string(hi) + " nodes");
}

}  // namespace aoti
