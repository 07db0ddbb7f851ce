// localize_first: for accuracy failures, find the culprit in one compile instead of a
// search. The program is compiled once with every floating intermediate exposed as an
// output; then each node is re-run alone in the interpreter on the *compiled* values of
// its inputs, natively and in float64, and its compiled value judged against those by the
// accuracy rule. The error found is the node's own, not what it inherited. The first nodes
// that diverge (up to three) are proposed alone, in order, then the first with its
// neighbours. When
// exposing the intermediates hides the bug (nothing diverges, or the candidate passes),
// the strategy gives way to the search.
#include <map>

#include "harness/program/interpreter.h"
#include "harness/check/accuracy_rule.h"
#include "reducer/graph_edit.h"
#include "reducer/strategies/strategy.h"
#include "harness/util/failure_class.h"

namespace aoti {
namespace {

// Relevant: the nodes whose values reach a user output. Where the test ignores bool and
// integer outputs (ignore_non_fp), an error is followed only along floating edges (a wrong
// mask that cannot change the result is not the failure being reduced); where it judges
// them (an argmax output), every edge counts.
std::vector<bool> Relevant(const Program& p, bool floating_only) {
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    for (const auto& v : NodeOutputNames(p.nodes[i])) producer[v] = i;
  }
  auto counts = [&](const std::string& v) {
    auto meta = p.tensor_values.find(v);
    return meta != p.tensor_values.end() && (!floating_only || c10::isFloatingType(meta->second.dtype));
  };
  std::vector<bool> relevant(p.nodes.size(), false);
  std::vector<std::string> work;
  for (const auto& s : p.output_specs) {
    if (s.kind == OutputKind::kUserOutput && counts(s.value_name)) work.push_back(s.value_name);
  }
  while (!work.empty()) {
    const std::string v = work.back();
    work.pop_back();
    auto it = producer.find(v);
    if (it == producer.end() || relevant[it->second]) continue;
    relevant[it->second] = true;
    for (const auto& in : NodeInputNames(p.nodes[it->second])) {
      if (counts(in)) work.push_back(in);
    }
  }
  return relevant;
}

// ReadsOrMakesWrittenValues: for each node, whether a value it reads or makes, or memory it
// shares (a view's base), is written in place by a later node (routing weights divided in
// place after the topk that made them). The compiled program exposes such a value as the
// write left it, not as the node made or read it, so the node cannot be judged alone from
// the exposed values. (A node's own in-place write, a relu_, is judged as before.)
std::vector<bool> ReadsOrMakesWrittenValues(const Program& p) {
  AliasClasses classes(p);
  const auto find = [&](const std::string& v) { return classes.Of(v); };
  std::map<std::string, size_t> last_write;  // memory class -> the last node writing it
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    for (const auto& v : MutatedValueNames(p.nodes[i])) last_write[find(v)] = i;
  }
  std::vector<bool> out(p.nodes.size(), false);
  if (last_write.empty()) return out;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    std::vector<std::string> values = NodeInputNames(p.nodes[i]);
    for (const auto& v : NodeOutputNames(p.nodes[i])) values.push_back(v);
    for (const auto& v : values) {
      auto it = last_write.find(find(v));
      if (it != last_write.end() && it->second > i) out[i] = true;
    }
  }
  return out;
}

// On 3 nodes or fewer the search needs no more compiles than the exposed program costs.
bool Applies(ReductionState& state) {
  return Is(state.oracle().target_class(), FailureClass::kAccuracy) && state.current().nodes.size() > 3;
}

}  // namespace

std::optional<Verdict> DiagnoseExposed(ReductionState& state) {
  if (!Applies(state)) return std::nullopt;
  state.Progress("  localize_first: the sanity check compiles the program with its intermediates exposed, "
                 "and judges its own outputs");
  return state.oracle().Diagnose(state.current(), ExposeIntermediates(state.current()), "");
}

namespace {

// OwnCopyOfWritten: `state` with the tensors `p` writes in place (its nodes' write aliases on
// lifted parameters, buffers and constants) copied, the others shared.
ProgramState OwnCopyOfWritten(const Program& p, const ProgramState& state) {
  ProgramState out = state;
  for (const auto& node : p.nodes) {
    for (const auto& v : MutatedValueNames(node)) {
      for (const auto& spec : p.input_specs) {
        if (spec.value_name != v || spec.target.empty()) continue;
        if (at::Tensor* t = out.Find(spec.target, spec.StoredWithConstants())) *t = t->clone();
      }
    }
  }
  return out;
}

// DivergesAlone: node i, run alone in the interpreter on the values the compiled program
// gave its inputs, against what the compiled program gave for its outputs: whether any
// output fails the test's rule. False where the node cannot be judged alone.
bool DivergesAlone(const Program& p, size_t i, const std::map<std::string, at::Tensor>& compiled_values,
                   const Oracle& oracle, const ProgramState& weights, const ProgramState& weights64,
                   const AccuracyOptions& rule) {
  std::vector<bool> keep(p.nodes.size(), false);
  keep[i] = true;
  Program alone;
  try {
    alone = KeepNodes(p, keep, OutputMode::kLast);
  } catch (const EditRefused&) {
    return false;
  }
  if (alone.output_specs.empty()) return false;
  std::vector<at::Tensor> inputs;
  for (const auto& name : UserInputNames(alone)) {
    auto it = compiled_values.find(name);
    if (it != compiled_values.end()) {
      inputs.push_back(it->second);
    } else if (oracle.values().Has(name)) {
      inputs.push_back(oracle.values().Get(name));  // a program input: the same for both
    } else {
      return false;
    }
  }
  std::vector<at::Tensor> eager, fp64;
  try {
    // A node that writes the program's state (a cache's index_copy_) writes copies: every
    // node is judged from the package's own state, whatever ran before it.
    // Under the reduction's deadline: a node alone that does not end is not judged alone.
    InterpreterOptions o;
    o.deadline = oracle.check().runner.deadline;
    eager = Interpreter(alone, OwnCopyOfWritten(alone, weights), o).RunTensors(inputs);
    InterpreterOptions o64 = o;
    o64.fp64 = true;
    fp64 = Interpreter(alone, OwnCopyOfWritten(alone, weights64), o64).RunTensors(inputs);
  } catch (const HarnessError&) {
    return false;  // the node alone does not run in the interpreter: it cannot be judged alone
  }
  // Integer outputs beside floating ones (topk's indices, sort's) count only where a floating
  // output diverges too: alone, they differ where equal values are ordered otherwise (the
  // compiled kernel reads its input unrounded, fused), which is no error of the node's.
  bool floating_output = false, integer_differs = false;
  for (size_t k = 0; k < alone.output_specs.size() && k < eager.size(); ++k) {
    auto got = compiled_values.find(alone.output_specs[k].value_name);
    if (got == compiled_values.end()) continue;
    const bool floating = c10::isFloatingType(got->second.scalar_type());
    floating_output = floating_output || floating;
    if (rule.ignore_non_fp && !floating) continue;
    if (!CompareOutputs(got->second, eager[k], fp64[k], rule).pass) {
      if (floating) return true;
      integer_differs = true;
    }
  }
  return integer_differs && !floating_output;
}

// ProposeAround: each suspect alone, in order (a node that diverges alone only where equal
// values are ordered otherwise, topk on a near-tie, is passed over for the next one), then
// the first with its neighbours (a fused kernel may need them).
bool ProposeAround(ReductionState& state, const Program& p, const std::vector<size_t>& suspects) {
  std::vector<std::pair<size_t, size_t>> proposals;  // (suspect, radius)
  for (size_t i : suspects) proposals.emplace_back(i, 0);
  for (size_t radius = 1; radius <= 2; ++radius) proposals.emplace_back(suspects.front(), radius);
  for (const auto& [i, radius] : proposals) {
    if (state.OutOfTime()) return false;
    std::vector<bool> window(p.nodes.size(), false);
    for (size_t j = i >= radius ? i - radius : 0; j <= std::min(p.nodes.size() - 1, i + radius); ++j) window[j] = true;
    try {
      if (state.Try(KeepNodes(p, window, OutputMode::kLast), "localize_first",
                    "node '" + NodePath(p.nodes[i]) + "' diverges on its own inputs" +
                        (radius ? " (with " + std::to_string(radius) + " neighbours each side)" : ""),
                    p.nodes[i].name)) {
        return true;
      }
    } catch (const EditRefused&) {
    }
  }
  return false;
}

}  // namespace

bool LocalizeFirst(ReductionState& state) {
  Oracle& oracle = state.oracle();
  if (!Applies(state)) return false;
  const Program exposed = ExposeIntermediates(state.current());
  std::vector<at::Tensor> compiled;
  std::string problem;
  if (!oracle.CompileAndRun(exposed, &compiled, &problem)) {
    state.Progress("  localize_first: the program with its intermediates exposed does not run (" + problem + ")");
    return false;
  }
  // What the compiled program computed, by value name.
  const std::map<std::string, at::Tensor> compiled_values = UserOutputsByName(exposed, compiled);
  // The weights, and their float64 promotion once for every node's reference (not once per node).
  const ProgramState weights = LoadProgramState(oracle.original(), oracle.model());
  const ProgramState weights64 = PromoteStateToFp64(weights);
  const Program& p = state.current();
  const AccuracyOptions rule = oracle.check().accuracy;
  const std::vector<bool> relevant = Relevant(p, rule.ignore_non_fp);
  const std::vector<bool> written = ReadsOrMakesWrittenValues(p);
  // The first few nodes that diverge on their own inputs, in order.
  constexpr size_t kSuspects = 3;
  std::vector<size_t> suspects;
  for (size_t i = 0; i < p.nodes.size() && suspects.size() < kSuspects && !state.OutOfTime(); ++i) {
    if (!relevant[i] || written[i] || !DivergesAlone(p, i, compiled_values, oracle, weights, weights64, rule)) {
      continue;
    }
    state.Progress("  localize_first: node " + std::to_string(i) + " '" + NodePath(p.nodes[i]) + "' (" + OperatorOf(p.nodes[i]) +
                   ") diverges on its own inputs");
    suspects.push_back(i);
  }
  if (suspects.empty()) {
    state.Progress("  localize_first: no node diverges on its own inputs; falling back to the search");
    return false;
  }
  return ProposeAround(state, p, suspects);  // else no proposal held: fall back to the search
}

}  // namespace aoti
