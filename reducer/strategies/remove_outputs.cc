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
  std::vector<Proposal> proposals;
  for (size_t keep = 0; keep < outs.size(); ++keep) {
    std::set<std::string> drop(outs.begin(), outs.end());
    drop.erase(outs[keep]);
    proposals.push_back({"kept only output '" + outs[keep] + "'", [&p, drop] { return DropOutputs(p, drop); }});
  }
  for (size_t half = 0; half < 2; ++half) {
    std::set<std::string> drop;
    for (size_t i = 0; i < outs.size(); ++i) {
      if ((i < outs.size() / 2) == (half == 0)) drop.insert(outs[i]);
    }
    proposals.push_back({"dropped " + std::to_string(drop.size()) + " outputs", [&p, drop] { return DropOutputs(p, drop); }});
  }
  return state.TryInOrder(proposals, "remove_outputs") >= 0;
}

}  // namespace aoti
