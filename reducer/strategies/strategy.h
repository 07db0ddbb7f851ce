// Strategy: one way of proposing smaller candidates. Each lives in its own file under
// reducer/strategies/ and is listed once in strategy_registry.cc, which sets the order
// the reducer tries them in and the names --aoti_reduce_strategies accepts.
#pragma once

#include <string>
#include <vector>

#include "reducer/reduction_state.h"

namespace aoti {

// A strategy returns true when it made the current program smaller.
using StrategyFn = bool (*)(ReductionState& state);

struct StrategyInfo {
  const char* name;
  const char* description;
  StrategyFn run;
};

// Strategies: the registry, in the order they are tried.
const std::vector<StrategyInfo>& Strategies();

// FindStrategy: by name; nullptr when unknown.
const StrategyInfo* FindStrategy(const std::string& name);

bool LocalizeFirst(ReductionState& state);
bool LocalizeKernel(ReductionState& state);
bool BisectPrefix(ReductionState& state);
bool IsolateTail(ReductionState& state);
bool RemoveOutputs(ReductionState& state);
bool DeltaDebugging(ReductionState& state);

}  // namespace aoti
