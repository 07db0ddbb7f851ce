// remove_outputs: a program with several outputs usually fails through one of them:
// keep each output alone, then try dropping half of them; dead code goes with them.
#include "reducer/graph_edit.h"
#include "reducer/strategies/strategy.h"

namespace aoti {

bool RemoveOutputs(ReductionState& state) {
  const Program p = state.current();
  std::vector<std::string> outs;
  for (const auto& s : p.output_specs) {
    if (s.kind == OutputKind::kUserOutput && !s.value_name.empty()) outs.push_back(s.value_name);
  }
  if (outs.size() <= 1) return false;
  for (size_t keep = 0; keep < outs.size() && !state.OutOfTime(); ++keep) {
    std::set<std::string> drop(outs.begin(), outs.end());
    drop.erase(outs[keep]);
    if (state.Try(DropOutputs(p, drop), "remove_outputs", "kept only output '" + outs[keep] + "'")) return true;
  }
  for (size_t half = 0; half < 2 && !state.OutOfTime(); ++half) {
    std::set<std::string> drop;
    for (size_t i = 0; i < outs.size(); ++i) {
      if ((i < outs.size() / 2) == (half == 0)) drop.insert(outs[i]);
    }
    if (state.Try(DropOutputs(p, drop), "remove_outputs", "dropped " + std::to_string(drop.size()) + " outputs")) return true;
  }
  return false;
}

}  // namespace aoti
