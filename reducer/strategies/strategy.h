// Strategy: one way of proposing smaller candidates. Each lives in its own file under
// reducer/strategies/ and is listed once in strategy_registry.cc, which sets the order
// the reducer tries them in and the names --aoti_reduce_strategies accepts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reducer/reduction_state.h"

namespace aoti {

// A strategy returns true when it made the current program smaller.
using StrategyFn = bool (*)(ReductionState& state);
// A diagnosis, made at the sanity check instead of its plain compile: the strategy's own
// diagnostic compile of the current program (Oracle::Diagnose), which both confirms the
// failure and gives the strategy what it reads later, so the pair costs one compile.
// Returns the verdict; the sanity check compiles the plain program only when it does not
// fail the same way. nullopt: no diagnosis for this failure or program.
using DiagnoseFn = std::optional<Verdict> (*)(ReductionState& state);

struct StrategyInfo {
  const char* name;
  const char* description;
  StrategyFn run;
  DiagnoseFn diagnose = nullptr;
};

// Strategies: the registry, in the order they are tried.
const std::vector<StrategyInfo>& Strategies();

// FindStrategy: by name; nullptr when unknown.
const StrategyInfo* FindStrategy(const std::string& name);

bool LocalizeFirst(ReductionState& state);
std::optional<Verdict> DiagnoseExposed(ReductionState& state);
bool LocalizeKernel(ReductionState& state);
std::optional<Verdict> DiagnoseKernelNames(ReductionState& state);
bool BisectPrefix(ReductionState& state);
bool IsolateTail(ReductionState& state);
bool RemoveOutputs(ReductionState& state);
bool DeltaDebugging(ReductionState& state);
bool ReduceBody(ReductionState& state);

}  // namespace aoti
