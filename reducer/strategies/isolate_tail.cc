// isolate_tail: after bisect_prefix the culprit is usually the last node; try the last
// 1, 2, 4, ... nodes alone: their inputs cut from the eager run, the current outputs kept.
#include "reducer/graph_edit.h"
#include "reducer/strategies/strategy.h"

namespace aoti {

bool IsolateTail(ReductionState& state) {
  const Program p = state.current();
  const size_t n = p.nodes.size();
  std::vector<Proposal> proposals;
  for (size_t w = 1; w < n; w *= 2) {
    proposals.push_back({"kept the last " + std::to_string(w) + " nodes", [&p, n, w] {
                           std::vector<bool> keep(n, false);
                           for (size_t i = n - w; i < n; ++i) keep[i] = true;
                           return KeepNodes(p, keep, OutputMode::kPreserve);
                         }});
  }
  return state.TryInOrder(proposals, "isolate_tail") >= 0;
}

}  // namespace aoti
