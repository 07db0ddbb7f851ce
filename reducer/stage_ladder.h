// The stage ladder and the workaround: once the culprit is known, which part of the
// compiler is at fault, and the smallest change that makes the original model pass today.
//
// The ladder compiles the minimal repro a few times, each with one change, and reads which
// change makes it pass:
//   1. the culprit's operator called as an ATen kernel (the harness's
//      aoti_harness.aten_fallbacks key, tools/package_model.py): passes -> inductor's own
//      code for it is at fault (its decomposition, lowering or generated code); still
//      fails -> the call around it (the wrapper and runtime);
//   2. (it passed) the CPU code not vectorised (cpp.simdlen=1, no vector ISA has that
//      width): passes -> the vectorised code generation;
//   3. (still) inductor's decomposition of the operator left out
//      (aoti_harness.skip_decompositions): passes -> the decomposition; an operator
//      without one is said so, at the cost of a load, not a compile;
//   4. (the fallback did not help) inductor's switches that PyTorch's CompilerBisector
//      flips: fallback_random, emulate_precision_casts, layout_optimization off,
//      comprehensive_padding off, freezing flipped; the first that passes names the stage.
// The workaround is the narrowest change that passed on the repro (the ATen fallback
// before a switch that changes the whole model), verified by one compile and check of the
// original program. Every compile is counted, within budgets the report states.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/program/program.h"
#include "reducer/oracle.h"

namespace aoti {

struct LadderRung {
  std::string name;          // "aten_fallback", "vectorisation_off", ...
  std::string configs_json;  // the inductor configs it adds (a JSON object, values as JSON literals)
  std::string what;          // for a person: "aten.relu.default called as an ATen kernel"
  std::string verdict;       // "passes", "fails the same way", "fails otherwise: ...", "not applicable: ..."
  bool passes = false;
  bool fails = false;        // fails the same way (neither: inconclusive, e.g. out of time)
  double seconds = 0;
};

struct StageReport {
  bool ran = false;            // false: not run (why_not says why)
  std::string why_not;
  std::string culprit_node, culprit_op;  // "relu", "aten.relu.default"
  std::string stage;           // "codegen (vectorised)", "lowering or codegen", "decomposition", ...
  std::string stage_reason;    // which rung said so
  std::vector<LadderRung> rungs;
  int ladder_compiles = 0, ladder_budget = 0;
  // The workaround: the change that made the original pass, verified (or the reason none was).
  std::string workaround_configs_json;  // "" when none
  std::string workaround_what;
  bool workaround_verified = false;
  std::string workaround_verdict;       // the original's verdict with it (or why none was tried)
  // The configs to write in aoti_package: the package's own with the workaround's.
  std::string merged_configs_json;
  double run_seconds_before = -1, run_seconds_after = -1;  // the original's compiled run; -1: unknown
  int workaround_compiles = 0, workaround_budget = 0;
  double seconds = 0;  // the ladder and the workaround together (not in the reduction's time)
};

struct StageLadderOptions {
  int ladder_budget = 4;      // compiles of the repro
  int workaround_budget = 2;  // compiles of the original
  double run_seconds_before = -1;  // the original's compiled run as built, when it ran to its end
};

// FindStageAndWorkaround: the ladder on `minimal` (failing as the oracle's target), then the
// workaround verified on `original`. `culprit` names a node of `minimal`. Stops, saying so,
// when the oracle's time is out.
StageReport FindStageAndWorkaround(Oracle& oracle, const Program& original, const Program& minimal,
                                   const std::string& culprit, const StageLadderOptions& options,
                                   const std::function<bool()>& out_of_time,
                                   const std::function<void(const std::string&)>& progress);

// WorkaroundMarkdown: workaround.md: the stage, and the workaround as the aoti_package
// line and as Python's inductor_configs, with what it costs.
std::string WorkaroundMarkdown(const StageReport& s, const std::string& model_label);

// StageJson: summary.json's "stage": the stage, the rungs, the workaround and the compiles.
nlohmann::json StageJson(const StageReport& s);

// StageMarkdown: report.md's section on the stage and the workaround ("" when not run).
std::string StageMarkdown(const StageReport& s);

}  // namespace aoti
