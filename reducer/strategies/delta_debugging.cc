// delta_debugging: upstream's core step. Replace a window of G consecutive nodes by
// inputs (their values from the eager run), keep the outputs, and let dead code
// elimination remove what only fed the window. G starts at --max_granularity (or the
// largest power of two below the node count) and halves to 1; any success restarts at
// the same G on the smaller program. The windows of one pass are independent
// candidates: the engine compiles them together on a pool.
#include "reducer/graph_edit.h"
#include "reducer/strategies/strategy.h"

namespace aoti {

bool DeltaDebugging(ReductionState& state) {
  bool progress = false;
  size_t g = 1;
  while (g * 2 < state.current().nodes.size()) g *= 2;
  if (state.options().max_granularity > 0) g = std::min<size_t>(g, state.options().max_granularity);
  for (; g >= 1 && !state.OutOfTime(); g /= 2) {
    while (!state.OutOfTime()) {
      const Program p = state.current();
      const size_t n = p.nodes.size();
      if (n <= 1) return progress;
      std::vector<Proposal> windows;
      for (size_t start = 0; start < n; start += g) {
        const size_t end = std::min(n, start + g);
        windows.push_back({"replaced nodes " + std::to_string(start) + ".." + std::to_string(end - 1) +
                               " (granularity " + std::to_string(g) + ") by inputs",
                           [&p, n, start, end] {
                             std::vector<bool> keep(n, true);
                             for (size_t i = start; i < end; ++i) keep[i] = false;
                             return KeepNodes(p, keep, OutputMode::kPreserve);
                           }});
      }
      if (state.TryInOrder(windows, "delta_debugging") < 0) break;
      progress = true;
    }
    if (g == 1) break;
  }
  return progress;
}

}  // namespace aoti
