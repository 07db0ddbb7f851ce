// localize_kernel: for compile errors, runtime errors, crashes and hangs, find the
// culprit from the kernel that failed instead of searching for it.
//   - compile error: the compiler names the function its first error is in.
//   - runtime error, signal, timeout: the program compiled with AOTI's kernel-name printer
//     (a compile-time setting) is run; the kernel launched and never finished is the one
//     that failed, and the launches of it that finished say which of its calls failed.
// That compile also asks inductor for its provenance record (trace.provenance_tracking_level,
// reducer/kernel_map.h): which graph nodes each kernel came from, whatever its name. It is
// the sanity check's compile (its diagnosis, DiagnoseKernelNames), so it costs nothing more;
// after an accepted proposal, or when the printer hid the failure at the sanity check, it
// is one more compile, counted.
// The kernel's nodes come from the record; only without one (another torch), from the
// operators the kernel's name carries. For a compile error or a crash that compile puts
// every node in a kernel of its own (the compile server's aoti_harness.one_kernel_per_node:
// nothing fused, each value in a buffer), so the failing kernel is one node, whatever order
// a fused kernel's name gives; when the failure is gone once the nodes are not fused, a
// compile as inductor fuses finds the kernel, whose nodes are then proposed together first
// (a fusion bug). The suspects are ranked: an operator that also ran
// (or compiled) in a kernel that worked comes last, then the operator's count in the
// program, rarest first. The first suspect is proposed alone, then the second (when its
// operator never worked elsewhere), then the kernel's nodes together, then the first with
// its neighbours. When no proposal fails the same way, the search takes over.
// A kernel generated from a higher-order op's body (a cond's branch, a loop's body) is
// recorded under the op itself (and the nodes feeding it), not under the body's nodes: its
// suspects inside are the body's nodes whose operator the kernel's name carries and no
// other node the record names explains. Each is proposed first with the control flow kept
// around it (a cond's branch not taken emptied, the rest of the program cut to the op),
// which is the repro when lifting the control flow does not show the failure.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "reducer/body_edit.h"
#include "reducer/graph_edit.h"
#include "reducer/kernel_map.h"
#include "reducer/strategies/strategy.h"
#include "harness/util/failure_class.h"

namespace aoti {
namespace {

std::string PrinterConfigs() {
  // Config values travel as JSON literals (as Bazel passes them); the printer level is the
  // string "3", not the number; the provenance level is the number 1.
  return nlohmann::json{{kKernelNamePrinterConfig, nlohmann::json(kKernelNamePrinterNamesOnly).dump()},
                        {kProvenanceConfig, "1"}}
      .dump();
}

// The diagnostic compile's configs for a compile error or a crash: the printer's, and every
// node in a kernel of its own (read by the compile server, tools/compile_server.py, never
// passed to inductor).
constexpr char kOneKernelPerNodeConfig[] = "aoti_harness.one_kernel_per_node";

std::string SplitConfigs() {
  nlohmann::json configs = nlohmann::json::parse(PrinterConfigs());
  configs[kOneKernelPerNodeConfig] = "true";
  return configs.dump();
}

// SplitsKernels: whether the diagnostic compile puts every node in a kernel of its own: for a
// compile error or a crash; not for a failure not known yet (a compile that fuses nothing
// computes otherwise, and an accuracy failure is judged on its numbers).
bool SplitsKernels(const std::string& target) { return Is(target, FailureClass::kCompileError) || IsCrash(target); }

std::string DiagnosisConfigs(bool split) { return split ? SplitConfigs() : PrinterConfigs(); }

// What the run's environment adds (KernelPrinterEnv), "K=V ..." or "".
std::string PrinterEnvText(const Oracle& oracle) {
  std::string text;
  for (const auto& [k, v] : KernelPrinterEnv(oracle.device())) text += (text.empty() ? "" : " ") + k + "=" + v;
  return text;
}

// The same for the progress lines.
std::string PrinterEnvNote(const Oracle& oracle) {
  const std::string text = PrinterEnvText(oracle);
  return text.empty() ? "" : ", run with " + text + " so that each launch waits for its kernel";
}

// Whether `text` names `kernel` as a whole word (cpp__1 is not named by cpp__12).
bool Mentions(const std::string& text, const std::string& kernel) {
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(kernel); at != std::string::npos; at = text.find(kernel, at + 1)) {
    const size_t end = at + kernel.size();
    if ((at == 0 || !word(text[at - 1])) && (end == text.size() || !word(text[end]))) return true;
  }
  return false;
}

// What the failure says about the kernel that failed.
struct FailedKernel {
  std::string kernel;  // "" when none was found (why says why)
  std::string why;
  int call = -1;       // which call of it failed (its launches that finished before); -1: unknown
  KernelProvenance provenance;
  // The calls that worked: kernels that finished (with how many launches), or that compiled
  // without an error.
  std::map<std::string, int> worked;
  // Set (to the last kernel that finished, possibly "") when the failure is in a call the
  // printer does not wrap.
  std::optional<std::string> unprinted_after;
  bool gone = false;  // the program did not fail under these configs (its nodes not fused)
};

// FindFailedKernel: the failing kernel under the diagnostic configs, with every node in a
// kernel of its own (`split`) or as inductor fuses.
FailedKernel FindFailedKernel(ReductionState& state, bool split) {
  Oracle& oracle = state.oracle();
  const Program& p = state.current();
  FailedKernel f;
  const std::string configs = DiagnosisConfigs(split);
  if (Is(oracle.target_class(), FailureClass::kCompileError)) {
    // The sanity check's diagnostic compile, or, when it made none (a program of 3 nodes or
    // fewer, or a skipped sanity check) or that compile says nothing, the program's own
    // (compiled already unless the sanity check was skipped): no compile is spent here.
    const CompileResult* c = oracle.Compiled(p, configs);
    if (split && c && c->ok) {
      f.gone = true;
      f.why = "the program compiles with each node in a kernel of its own";
      return f;
    }
    if (!c || c->phase != "compile") {
      oracle.Test(p);
      c = oracle.Compiled(p);
    }
    if (!c) {
      f.why = "the program's compile left no record";
      return f;
    }
    const std::string output = c->message + "\n" + c->compiler_errors;
    f.kernel = KernelInCompilerOutput(output);
    if (f.kernel.empty()) f.why = "the compiler's output names no function";
    f.provenance = ParseKernelProvenance(c->kernel_information);
    for (const auto& [kernel, calls] : f.provenance) {
      if (!Mentions(output, kernel)) f.worked[kernel] = static_cast<int>(calls.size());
    }
    return f;
  }
  // One diagnostic compile per program size: after an accepted proposal the smaller
  // program is cheaper to search than to diagnose again.
  if (!state.FirstTime("kernel_printer " + configs)) {
    f.why = "the kernel-name run was spent on a larger program";
    return f;
  }
  state.Progress("  localize_kernel: the run under the kernel-name printer (" + std::string(kKernelNamePrinterConfig) +
                 "=" + kKernelNamePrinterNamesOnly + ", " + kProvenanceConfig + "=1" +
                 (split ? std::string(", ") + kOneKernelPerNodeConfig + "=true" : std::string()) + ")" +
                 PrinterEnvNote(oracle));
  CompiledOutcome outcome;
  std::string problem;
  if (!oracle.RunWithConfigs(p, configs, &outcome, &problem, KernelPrinterEnv(oracle.device()))) {
    f.why = "the program does not compile with the printer (" + problem + ")";
    return f;
  }
  if (split && outcome.ok()) {
    f.gone = true;
    f.why = "the program runs with each node in a kernel of its own";
    return f;
  }
  if (const CompileResult* c = oracle.Compiled(p, configs)) f.provenance = ParseKernelProvenance(c->kernel_information);
  for (const std::string& k : FinishedKernels(outcome.stderr_text)) ++f.worked[k];
  f.kernel = KernelThatDidNotFinish(outcome.stderr_text);
  if (f.kernel.empty() && !outcome.ok() && !UnprintedCallNodes(p).empty()) {
    // Every printed launch finished, yet the model failed: the failing call is one the
    // printer does not wrap (a custom op).
    f.unprinted_after = LastFinishedKernel(outcome.stderr_text);
    return f;
  }
  if (f.kernel.empty()) {
    f.why = "every launched kernel finished (" + outcome.Summary().substr(0, 200) + ")";
  } else {
    f.call = FinishedLaunches(outcome.stderr_text, f.kernel);
  }
  return f;
}

// The operators (targets) of the calls that worked, as the provenance record maps them.
std::set<std::string> WorkedOperators(const Program& p, const FailedKernel& f) {
  std::set<std::string> ops;
  for (const auto& [kernel, launches] : f.worked) {
    const auto calls = f.provenance.find(kernel);
    if (calls == f.provenance.end()) continue;
    for (int c = 0; c < launches && c < static_cast<int>(calls->second.size()); ++c) {
      for (size_t i : KernelNodes(p, f.provenance, kernel, c)) ops.insert(OperatorOf(p.nodes[i]));
    }
  }
  return ops;
}

// The nodes of `kernel` (its call `call`) as the record has them; without them, those its
// name carries (`recorded` says which).
std::vector<size_t> NodesOf(const Program& p, const KernelProvenance& provenance, const std::string& kernel, int call,
                            bool* recorded) {
  std::vector<size_t> nodes = KernelNodes(p, provenance, kernel, call);
  *recorded = !nodes.empty();
  return *recorded ? nodes : NodesForKernel(p, kernel);
}

// The failing kernel's nodes in the current program, and how they were found.
struct KernelNodesFound {
  std::string kernel;
  std::vector<size_t> nodes;
  bool recorded = false;  // the nodes are the record's, exactly the kernel's call
};

// LocateFailingKernel: the nodes of the kernel that failed, or of the first call the
// printer does not wrap when every printed launch finished; nullopt (said) when there is
// nothing to localize by.
std::optional<KernelNodesFound> LocateFailingKernel(ReductionState& state, const Program& p, const FailedKernel& f) {
  KernelNodesFound found;
  found.kernel = f.kernel;
  if (f.unprinted_after) {
    // The first custom-op call after the last kernel that finished.
    found.nodes = UnprintedCallNodes(p);
    bool before_recorded = false;
    const std::vector<size_t> before = NodesOf(p, f.provenance, *f.unprinted_after, -1, &before_recorded);
    if (!before.empty()) {
      auto after = std::find_if(found.nodes.begin(), found.nodes.end(), [&](size_t i) { return i > before.front(); });
      if (after != found.nodes.end()) found.nodes.erase(found.nodes.begin(), after);
    }
    found.nodes.resize(1);
    found.kernel = OperatorOf(p.nodes[found.nodes[0]]);
    state.Progress("  localize_kernel: every printed launch finished (the last: " +
                   (f.unprinted_after->empty() ? std::string("none") : *f.unprinted_after) +
                   "); the failing call is one the printer does not wrap: " + found.kernel);
  } else if (found.kernel.empty()) {
    state.Progress("  localize_kernel: " + f.why + "; falling back to the search");
    return std::nullopt;
  } else {
    found.nodes = NodesOf(p, f.provenance, found.kernel, f.call, &found.recorded);
  }
  if (found.nodes.empty()) {
    state.Progress("  localize_kernel: kernel " + found.kernel +
                   (f.provenance.empty() ? " (no provenance record)" : " (not in the provenance record)") +
                   " names no operator of the program; falling back to the search");
    return std::nullopt;
  }
  return found;
}

// Rank: the suspects, ranked: an operator that worked in another call last; then the
// rarest in the program; then the first.
std::vector<size_t> Rank(const Program& p, const std::vector<size_t>& nodes, const std::set<std::string>& worked) {
  std::map<std::string, int> count;
  for (const Node& n : p.nodes) ++count[OperatorOf(n)];
  std::vector<size_t> ranked = nodes;
  std::stable_sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
    const auto key = [&](size_t i) { return std::make_pair(worked.count(OperatorOf(p.nodes[i])), count[OperatorOf(p.nodes[i])]); };
    return key(a) < key(b);
  });
  return ranked;
}

using Proposals = std::vector<std::pair<std::vector<bool>, std::string>>;

// Propose: candidates, smallest first: the first suspect alone, the second alone, the
// kernel's nodes (its call as recorded, else its operators near the first suspect), and
// the first suspect with its neighbours.
Proposals Propose(const Program& p, const KernelNodesFound& found, const std::vector<size_t>& ranked,
                  const std::set<std::string>& worked, const std::string& blocking, bool fused_first) {
  const size_t anchor = ranked.front();
  const auto alone = [&](size_t i) {
    std::vector<bool> keep(p.nodes.size(), false);
    keep[i] = true;
    return keep;
  };
  Proposals proposals;
  proposals.push_back({alone(anchor), "node '" + NodePath(p.nodes[anchor]) + "' of kernel " + found.kernel + blocking});
  if (ranked.size() > 1 && !worked.count(OperatorOf(p.nodes[ranked[1]])) &&
      (found.recorded || OperatorOf(p.nodes[ranked[1]]) != OperatorOf(p.nodes[anchor]))) {
    proposals.push_back({alone(ranked[1]), "node '" + NodePath(p.nodes[ranked[1]]) + "' of kernel " + found.kernel + blocking});
  }
  std::vector<bool> fused = alone(anchor);
  if (found.recorded) {
    for (size_t i : found.nodes) fused[i] = true;
  } else {
    const std::string ops = KernelOperators(found.kernel);
    const size_t reach = 1 + std::count(ops.begin(), ops.end(), '_');
    for (size_t i : found.nodes) {
      if (i + reach >= anchor && i <= anchor + reach) fused[i] = true;
    }
  }
  if (std::count(fused.begin(), fused.end(), true) > 1) {
    proposals.push_back(
        {fused, "the nodes of kernel " + found.kernel + " around '" + NodePath(p.nodes[anchor]) + "'" + blocking});
  }
  std::vector<bool> window = alone(anchor);
  if (anchor > 0) window[anchor - 1] = true;
  if (anchor + 1 < p.nodes.size()) window[anchor + 1] = true;
  if (window != fused) proposals.push_back({window, "node '" + NodePath(p.nodes[anchor]) + "' with its neighbours"});
  if (fused_first) {
    // A fusion bug: the failure needs the kernel's nodes together.
    std::stable_partition(proposals.begin(), proposals.end(), [&](const auto& proposal) { return proposal.first == fused; });
  }
  return proposals;
}

// A suspect inside the body of the higher-order op at `hop`: the body node's name, and
// its address for the progress lines.
struct BodySuspect {
  size_t hop = 0;
  std::string node;
  std::string address;
};

// BodySuspects: the failing kernel's suspects inside the bodies of the higher-order ops the
// record names for it; rarest operator in its body first, two at most.
std::vector<BodySuspect> BodySuspects(const Program& p, const KernelNodesFound& found) {
  std::vector<BodySuspect> suspects;
  if (!found.recorded) return suspects;
  // What the record's other nodes explain of the kernel's name.
  std::set<std::string> explained;
  for (size_t i : found.nodes) {
    if (HigherOrderName(p.nodes[i]).empty()) explained.insert(OperatorOf(p.nodes[i]));
  }
  for (size_t hop : found.nodes) {
    if (HigherOrderName(p.nodes[hop]).empty()) continue;
    std::optional<ReducibleBody> body;
    try {
      body = BodyToReduce(p, hop);
    } catch (const HarnessError&) {
      continue;
    }
    if (!body) continue;
    Program inside;
    inside.nodes = body->graph.nodes;
    std::map<std::string, int> count;
    for (const Node& n : inside.nodes) ++count[OperatorOf(n)];
    std::vector<size_t> named;
    for (size_t j : NodesForKernel(inside, found.kernel)) {
      if (!explained.count(OperatorOf(inside.nodes[j])) && HigherOrderName(inside.nodes[j]).empty()) named.push_back(j);
    }
    std::stable_sort(named.begin(), named.end(), [&](size_t a, size_t b) {
      return count[OperatorOf(inside.nodes[a])] < count[OperatorOf(inside.nodes[b])];
    });
    for (size_t j : named) {
      if (suspects.size() == 2) break;
      suspects.push_back({hop, inside.nodes[j].name, body->address + "/" + inside.nodes[j].name});
    }
  }
  return suspects;
}

// KeptAroundBodyNode: `p` cut to the higher-order op at `hop`, its body cut to `node` (a
// loop's body also to the nodes its value flows through to what the body returns, and to
// what the loop's condition reads), a cond's branch not taken emptied, every cut edge an
// input of its recorded value. EditRefused when a cut cannot be made.
Program KeptAroundBodyNode(const Program& p, size_t hop, const std::string& node) {
  const bool cond = HigherOrderName(p.nodes[hop]) == "cond";
  const std::string hop_name = p.nodes[hop].name;
  const auto find_hop = [&hop_name](const Program& q) {
    for (size_t i = 0; i < q.nodes.size(); ++i) {
      if (q.nodes[i].name == hop_name) return i;
    }
    throw EditRefused("the edit lost node '" + hop_name + "'");
  };
  // The program cut to the op first: then nothing else reads what its body returns.
  std::vector<bool> top(p.nodes.size(), false);
  top[hop] = true;
  Program q = KeepNodes(p, top, OutputMode::kLast);
  hop = find_hop(q);
  std::optional<ReducibleBody> body = BodyToReduce(q, hop);
  if (!body) throw EditRefused("node '" + hop_name + "' has no body that ran");
  if (cond) {
    const Program whole = q;
    try {
      q = EmptyUntakenBranch(q, hop, *body);
      hop = find_hop(q);
      body = BodyToReduce(q, hop);
      if (!body) throw EditRefused("node '" + hop_name + "' has no body that ran");
    } catch (const EditRefused&) {
      q = whole;  // emptied already, or it cannot be: the branch stays as it is
      hop = find_hop(q);
      body = BodyToReduce(q, hop);
    }
  }
  const BodyOutputs outputs = BodyOutputsOf(q.nodes[hop]);
  std::vector<bool> keep = KeptForTermination(q, hop, *body);
  const auto& nodes = body->graph.nodes;
  const auto at = std::find_if(nodes.begin(), nodes.end(), [&](const Node& n) { return n.name == node; });
  if (at == nodes.end()) throw EditRefused("no node '" + node + "' in " + body->address);
  // A loop's body returns what it carries: the node's value reaches those outputs only
  // through the nodes after it that read it, kept too (else the node is dead code, and the
  // compiled body never runs it).
  const size_t j = at - nodes.begin();
  const std::vector<bool> flows = FlowsFrom(body->graph, j);
  keep[j] = true;
  for (size_t i = 0; i < nodes.size() && outputs == BodyOutputs::kPreserve; ++i) keep[i] = keep[i] || flows[i];
  return KeepBodyNodes(q, hop, *body, keep, outputs);
}

}  // namespace

std::optional<Verdict> DiagnoseKernelNames(ReductionState& state) {
  // For a crash, a compile error (whose provenance record comes with the same compile), or a
  // failure not known yet. On 3 nodes or fewer the search is as cheap as a diagnosis.
  const std::string& target = state.oracle().target_class();
  if (!(target.empty() || IsCrash(target) || Is(target, FailureClass::kCompileError)) || state.current().nodes.size() <= 3) {
    return std::nullopt;
  }
  const bool split = SplitsKernels(target);
  state.Progress("  localize_kernel: the sanity check compiles the program with the kernel-name printer (" +
                 std::string(kKernelNamePrinterConfig) + "=" + kKernelNamePrinterNamesOnly + ") and provenance (" +
                 kProvenanceConfig + "=1)" +
                 (split ? std::string(", each node in a kernel of its own (") + kOneKernelPerNodeConfig + ")"
                        : std::string()) +
                 PrinterEnvNote(state.oracle()));
  return state.oracle().Diagnose(state.current(), state.current(), DiagnosisConfigs(split),
                                 KernelPrinterEnv(state.oracle().device()));
}

bool LocalizeKernel(ReductionState& state) {
  const std::string& target = state.oracle().target_class();
  const Program p = state.current();
  if (Is(target, FailureClass::kCompileError) ? p.nodes.size() <= 1 : (!IsCrash(target) || p.nodes.size() <= 3)) {
    // A crash costs a diagnostic compile: on 3 nodes or fewer the search is as cheap.
    return false;
  }
  FailedKernel f = FindFailedKernel(state, SplitsKernels(target));
  bool fused_first = false;
  if (f.gone) {
    // Not fused, it does not fail: the nodes fail together. The kernel that fails as
    // inductor fuses names them, proposed together first.
    state.Progress("  localize_kernel: " + f.why + " and does not fail: a fusion bug; the kernel that fails as "
                   "inductor fuses is proposed whole first");
    f = FindFailedKernel(state, /*split=*/false);
    fused_first = true;
  }
  const std::optional<KernelNodesFound> found = LocateFailingKernel(state, p, f);
  if (!found) return false;
  const std::set<std::string> worked = WorkedOperators(p, f);
  const std::vector<size_t> ranked = Rank(p, found->nodes, worked);
  const size_t anchor = ranked.front();
  const std::string from = found->recorded ? "inductor's provenance record" : "its name";
  const std::string call = found->recorded && f.call > 0 ? " (call " + std::to_string(f.call + 1) + ")" : "";
  state.Progress("  localize_kernel: kernel " + found->kernel + call + " -> " + std::to_string(found->nodes.size()) +
                 " node(s) from " + from + (found->recorded ? "" : " (" + KernelOperators(found->kernel) + ")") +
                 "; first suspect '" + NodePath(p.nodes[anchor]) + "' (" + OperatorOf(p.nodes[anchor]) + ")");
  const std::string env = PrinterEnvText(state.oracle());
  const std::string blocking = env.empty() ? "" : " (run with " + env + ")";
  for (const BodySuspect& b : BodySuspects(p, *found)) {
    if (state.OutOfTime()) break;
    const std::string what = "node '" + b.address + "' of kernel " + found->kernel + ", its " +
                             HigherOrderName(p.nodes[b.hop]) + " kept around it" + blocking;
    try {
      if (state.Try(KeptAroundBodyNode(p, b.hop, b.node), "localize_kernel", what, b.address)) return true;
    } catch (const EditRefused& e) {
      state.Progress("  localize_kernel: " + what + " cannot be cut: " + e.what());
    }
  }
  for (const auto& [keep, what] : Propose(p, *found, ranked, worked, blocking, fused_first)) {
    if (state.OutOfTime()) break;
    try {
      const size_t named = std::find(keep.begin(), keep.end(), true) - keep.begin();
      if (state.Try(KeepNodes(p, keep, OutputMode::kLast), "localize_kernel", what, p.nodes[named].name)) return true;
    } catch (const EditRefused& e) {
      state.Progress("  localize_kernel: " + what + " cannot stand alone: " + e.what());
    }
  }
  state.Progress("  localize_kernel: no proposal fails the same way; falling back to the search");
  return false;
}

}  // namespace aoti
