// delta_debugging: upstream's core step. Replace a window of G consecutive nodes by
// inputs (their values from the eager run), keep the outputs, and let dead code
// elimination remove what only fed the window. G starts at --max_granularity (or the
// largest power of two below the node count) and halves to 1; any success restarts at
// the same G on the smaller program.
#include "reducer/graph_edit.h"
#include "reducer/strategies/strategy.h"

namespace aoti {

bool DeltaDebugging(ReductionState& state) {
  bool progress = false;
  size_t g = 1;
  while (g * 2 < state.current().nodes.size()) g *= 2;
  if (state.options().max_granularity > 0) g = std::min<size_t>(g, state.options().max_granularity);
  for (; g >= 1 && !state.OutOfTime(); g /= 2) {
    bool again = true;
    while (again && !state.OutOfTime()) {
      again = false;
      const Program p = state.current();
      const size_t n = p.nodes.size();
      if (n <= 1) return progress;
      for (size_t start = 0; start < n && !state.OutOfTime(); start += g) {
        std::vector<bool> keep(n, true);
        for (size_t i = start; i < std::min(n, start + g); ++i) keep[i] = false;
        try {
          if (state.Try(KeepNodes(p, keep, OutputMode::kPreserve), "delta_debugging",
                        "replaced nodes " + std::to_string(start) + ".." + std::to_string(std::min(n, start + g) - 1) +
                            " (granularity " + std::to_string(g) + ") by inputs")) {
            progress = again = true;
            break;
          }
        } catch (const EditRefused& e) {
          state.Progress("  window at " + std::to_string(start) + " cannot be cut: " + e.what());
        }
      }
    }
    if (g == 1) break;
  }
  return progress;
}

}  // namespace aoti
