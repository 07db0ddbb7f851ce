// reduce_body: delta debugging inside a higher-order op's body, with its control flow kept:
// for a failure the lifted program does not show (it needs the cond, the loop, the region
// themselves), a cond's branch not taken is emptied (it returns clones of what the branch
// taken returned), then the branch taken, the loop's or the region's body is cut down window
// by window (G halving to 1) as delta_debugging cuts a program, each cut edge passed in from
// the recorded run (reducer/body_edit.h): a cond's or a region's results become what the last
// node kept makes; a loop's body keeps returning what it carries, and what its condition reads.
// Where a localizing strategy named the culprit inside the body (its address), a window
// whose cut leaves the culprit's value reaching nothing the body returns is not compiled:
// the culprit would be dead code, never run.
#include <algorithm>
#include <set>

#include "reducer/body_edit.h"
#include "reducer/graph_edit.h"
#include "reducer/strategies/strategy.h"

namespace aoti {
namespace {

// The body node a localizing strategy named as the culprit (by its address inside
// `address`), or -1.
int CulpritInBody(const ReductionState& state, const ReducibleBody& body) {
  std::string culprit;
  for (const auto& entry : state.log()) {
    if (!entry.culprit.empty()) culprit = entry.culprit;
  }
  const std::string prefix = body.address + "/";
  if (culprit.rfind(prefix, 0) != 0) return -1;
  const std::string name = culprit.substr(prefix.size());
  for (size_t j = 0; j < body.graph.nodes.size(); ++j) {
    if (body.graph.nodes[j].name == name) return static_cast<int>(j);
  }
  return -1;
}

// Whether node `c`'s value still reaches what the body returns once cut to `keep`.
bool CulpritLive(const ReducibleBody& body, const std::vector<bool>& keep, size_t c, BodyOutputs outputs) {
  if (!keep[c]) return false;
  const std::vector<bool> flows = FlowsFrom(body.graph, c, keep);
  if (outputs == BodyOutputs::kLast) {
    // The body returns what its last kept node makes.
    size_t last = keep.size() - 1;
    while (!keep[last]) --last;
    return flows[last];
  }
  std::set<std::string> reached;
  for (size_t j = 0; j < flows.size(); ++j) {
    if (!flows[j]) continue;
    for (const std::string& out : NodeOutputNames(body.graph.nodes[j])) reached.insert(out);
  }
  std::vector<std::string> returned;
  for (const auto& o : body.graph.outputs) ArgumentValueNames(o, &returned);
  return std::any_of(returned.begin(), returned.end(), [&](const std::string& r) { return reached.count(r) > 0; });
}

}  // namespace

bool ReduceBody(ReductionState& state) {
  for (size_t hop = 0; hop < state.current().nodes.size() && !state.OutOfTime(); ++hop) {
    const Program p = state.current();
    const std::optional<ReducibleBody> body = BodyToReduce(p, hop);
    if (!body) continue;
    const size_t n = body->graph.nodes.size();
    if (n <= 1) continue;
    if (HigherOrderName(p.nodes[hop]) == "cond") {
      // The branch not taken first: it never ran.
      const int i = state.TryInOrder({{"the branch " + body->address + " did not take, emptied",
                                       [&p, &body, hop] { return EmptyUntakenBranch(p, hop, *body); }}},
                                     "reduce_body");
      if (i >= 0) return true;
    }
    const std::vector<bool> kept = KeptForTermination(p, hop, *body);
    // A cond's or a region's results may change: the body returns what its last kept node
    // makes. A loop's body returns what it carries: its outputs stay.
    const BodyOutputs outputs = BodyOutputsOf(p.nodes[hop]);
    const int culprit = CulpritInBody(state, *body);
    size_t g = 1;
    while (g * 2 < n) g *= 2;
    for (; g >= 1; g /= 2) {
      std::vector<Proposal> windows;
      for (size_t start = 0; start < n; start += g) {
        const size_t end = std::min(n, start + g);
        if (std::all_of(kept.begin() + start, kept.begin() + end, [](bool k) { return k; })) continue;
        if (culprit >= 0) {
          std::vector<bool> keep(n, true);
          for (size_t i = start; i < end; ++i) keep[i] = kept[i];
          if (!CulpritLive(*body, keep, static_cast<size_t>(culprit), outputs)) continue;
        }
        windows.push_back({"in " + body->address + ": replaced nodes " + std::to_string(start) + ".." +
                               std::to_string(end - 1) + " (granularity " + std::to_string(g) + ") by inputs",
                           [&p, &body, &kept, hop, n, start, end, outputs] {
                             std::vector<bool> keep(n, true);
                             for (size_t i = start; i < end; ++i) keep[i] = kept[i];
                             return KeepBodyNodes(p, hop, *body, keep, outputs);
                           }});
      }
      if (state.TryInOrder(windows, "reduce_body") >= 0) return true;
      if (g == 1) break;
    }
  }
  return false;
}

}  // namespace aoti
