// isolate_tail: after bisect_prefix the culprit is usually the last node; try the last
// 1, 2, 4, ... nodes alone: their inputs cut from the eager run, the current outputs kept.
#include "reducer/graph_edit.h"
#include "reducer/strategies/strategy.h"

namespace aoti {

bool IsolateTail(ReductionState& state) {
  const Program p = state.current();
  const size_t n = p.nodes.size();
  for (size_t w = 1; w < n && !state.OutOfTime(); w *= 2) {
    std::vector<bool> keep(n, false);
    for (size_t i = n - w; i < n; ++i) keep[i] = true;
    try {
      if (state.Try(KeepNodes(p, keep, OutputMode::kPreserve), "isolate_tail", "kept the last " + std::to_string(w) + " nodes")) {
        return true;
      }
    } catch (const EditRefused& e) {
      state.Progress("  the last " + std::to_string(w) + " nodes cannot stand alone: " + e.what());
    }
  }
  return false;
}

}  // namespace aoti
