// localize_kernel: for compile errors, runtime errors, crashes and hangs, find the
// culprit from the kernel that failed instead of searching for it.
//   - compile error: the compiler names the function its first error is in; the
//     current program's compile already said it, so this costs no compile.
//   - runtime error, signal, timeout: the current program is compiled with AOTI's
//     kernel-name printer (a compile-time setting) and run; the kernel launched and never
//     finished is the one that failed. That compile is the sanity check's (its diagnosis,
//     DiagnoseKernelNames), so it costs nothing more; after an accepted proposal, or when
//     the printer hid the failure at the sanity check, it is one more compile, counted.
// The kernel's name carries the operators fused into it (reducer/kernel_map.h). The
// first node of its rarest operator is proposed alone, then with the kernel's other
// operators around it, then with its neighbours. When no proposal fails the same way,
// the search takes over.
#include <algorithm>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "reducer/graph_edit.h"
#include "reducer/kernel_map.h"
#include "reducer/strategies/strategy.h"

namespace aoti {
namespace {

std::string PrinterConfigs() {
  // Config values travel as JSON literals (as Bazel passes them); the printer level is the
  // string "3", not the number.
  return nlohmann::json{{kKernelNamePrinterConfig, nlohmann::json(kKernelNamePrinterNamesOnly).dump()}}.dump();
}

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

bool IsCrash(const std::string& failure_class) {
  return failure_class == "runtime error" || failure_class == "timeout" || failure_class.rfind("signal", 0) == 0;
}

// The kernel that failed, or "" with the reason in `why`.
// `unprinted_after` is set (to the last kernel that finished, possibly "") when the
// failure is in a call the printer does not wrap.
std::string FailedKernel(ReductionState& state, std::string* why, std::optional<std::string>* unprinted_after) {
  Oracle& oracle = state.oracle();
  const Program& p = state.current();
  if (oracle.target_class() == "compile error") {
    // The sanity check's compile under the printer, or the program's own (compiled already
    // unless the sanity check was skipped).
    const CompileResult* c = oracle.Compiled(p, PrinterConfigs());
    if (!c || c->phase != "compile") {
      oracle.Test(p);
      c = oracle.Compiled(p);
    }
    if (!c) {
      *why = "the program's compile left no record";
      return "";
    }
    const std::string kernel = KernelInCompilerOutput(c->message + "\n" + c->compiler_errors);
    if (kernel.empty()) *why = "the compiler's output names no function";
    return kernel;
  }
  // One diagnostic compile per program size: after an accepted proposal the smaller
  // program is cheaper to search than to diagnose again.
  if (!state.FirstTime("kernel_printer")) {
    *why = "the kernel-name run was spent on a larger program";
    return "";
  }
  state.Progress("  localize_kernel: the run under the kernel-name printer (" + std::string(kKernelNamePrinterConfig) +
                 "=" + kKernelNamePrinterNamesOnly + ")" + PrinterEnvNote(oracle));
  CompiledOutcome outcome;
  std::string problem;
  if (!oracle.RunWithConfigs(p, PrinterConfigs(), &outcome, &problem, KernelPrinterEnv(oracle.device()))) {
    *why = "the program does not compile with the printer (" + problem + ")";
    return "";
  }
  std::string kernel = KernelThatDidNotFinish(outcome.stderr_text);
  if (kernel.empty() && !outcome.ok() && !UnprintedCallNodes(p).empty()) {
    // Every printed launch finished, yet the model failed: the failing call is one the
    // printer does not wrap (a custom op).
    *unprinted_after = LastFinishedKernel(outcome.stderr_text);
    return "";
  }
  if (kernel.empty()) *why = "every launched kernel finished (" + outcome.Summary().substr(0, 200) + ")";
  return kernel;
}

}  // namespace

std::optional<Verdict> DiagnoseKernelNames(ReductionState& state) {
  // For a crash, or a failure not known yet (a compile error is read from the same
  // compile). On 3 nodes or fewer the search is as cheap as a diagnosis.
  const std::string& target = state.oracle().target_class();
  if (!(target.empty() || IsCrash(target)) || state.current().nodes.size() <= 3) return std::nullopt;
  state.Progress("  localize_kernel: the sanity check compiles the program with the kernel-name printer (" +
                 std::string(kKernelNamePrinterConfig) + "=" + kKernelNamePrinterNamesOnly + ")" +
                 PrinterEnvNote(state.oracle()));
  return state.oracle().Diagnose(state.current(), state.current(), PrinterConfigs(),
                                 KernelPrinterEnv(state.oracle().device()));
}

bool LocalizeKernel(ReductionState& state) {
  const std::string& target = state.oracle().target_class();
  const Program p = state.current();
  if (target == "compile error" ? p.nodes.size() <= 1 : (!IsCrash(target) || p.nodes.size() <= 3)) {
    // A crash costs a diagnostic compile: on 3 nodes or fewer the search is as cheap.
    return false;
  }
  std::string why;
  std::optional<std::string> unprinted_after;
  std::string kernel = FailedKernel(state, &why, &unprinted_after);
  std::vector<size_t> nodes;
  if (unprinted_after) {
    // The first custom-op call after the last kernel that finished.
    nodes = UnprintedCallNodes(p);
    const std::vector<size_t> before = NodesForKernel(p, *unprinted_after);
    if (!before.empty()) {
      auto after = std::find_if(nodes.begin(), nodes.end(), [&](size_t i) { return i > before.front(); });
      if (after != nodes.end()) nodes.erase(nodes.begin(), after);
    }
    nodes.resize(1);
    kernel = ShortTarget(p.nodes[nodes[0]].target);
    state.Progress("  localize_kernel: every printed launch finished (the last: " +
                   (unprinted_after->empty() ? std::string("none") : *unprinted_after) +
                   "); the failing call is one the printer does not wrap: " + kernel);
  } else if (kernel.empty()) {
    state.Progress("  localize_kernel: " + why + "; falling back to the search");
    return false;
  } else {
    nodes = NodesForKernel(p, kernel);
  }
  if (nodes.empty()) {
    state.Progress("  localize_kernel: kernel " + kernel + " names no operator of the program; falling back to the search");
    return false;
  }
  // The anchor: the first node of the kernel's rarest operator in this program.
  std::map<std::string, int> count;
  for (size_t i : nodes) ++count[p.nodes[i].target];
  const size_t anchor = *std::min_element(nodes.begin(), nodes.end(), [&](size_t a, size_t b) {
    return count[p.nodes[a].target] < count[p.nodes[b].target] ||
           (count[p.nodes[a].target] == count[p.nodes[b].target] && a < b);
  });
  state.Progress("  localize_kernel: kernel " + kernel + " (" + KernelOperators(kernel) + ") -> node '" +
                 p.nodes[anchor].name + "' (" + ShortTarget(p.nodes[anchor].target) + ")");
  // Proposals, smallest first: the anchor alone; the kernel's operators within a few
  // nodes of it (a fused kernel); the anchor with one neighbour each side.
  std::vector<std::pair<std::vector<bool>, std::string>> proposals;
  std::vector<bool> alone(p.nodes.size(), false);
  alone[anchor] = true;
  const std::string env = PrinterEnvText(state.oracle());
  const std::string blocking = env.empty() ? "" : " (run with " + env + ")";
  proposals.push_back({alone, "node '" + p.nodes[anchor].name + "' of kernel " + kernel + blocking});
  std::vector<bool> fused = alone;
  const std::string ops = KernelOperators(kernel);
  const size_t reach = 1 + std::count(ops.begin(), ops.end(), '_');
  for (size_t i : nodes) {
    if (i + reach >= anchor && i <= anchor + reach) fused[i] = true;
  }
  if (fused != alone) proposals.push_back({fused, "the nodes of kernel " + kernel + " around '" + p.nodes[anchor].name + "'" + blocking});
  std::vector<bool> window = alone;
  if (anchor > 0) window[anchor - 1] = true;
  if (anchor + 1 < p.nodes.size()) window[anchor + 1] = true;
  if (window != fused) proposals.push_back({window, "node '" + p.nodes[anchor].name + "' with its neighbours"});
  for (const auto& [keep, what] : proposals) {
    if (state.OutOfTime()) break;
    try {
      if (state.Try(KeepNodes(p, keep, OutputMode::kLast), "localize_kernel", what, p.nodes[anchor].name)) return true;
    } catch (const EditRefused& e) {
      state.Progress("  localize_kernel: " + what + " cannot stand alone: " + e.what());
    }
  }
  state.Progress("  localize_kernel: no proposal fails the same way; falling back to the search");
  return false;
}

}  // namespace aoti
