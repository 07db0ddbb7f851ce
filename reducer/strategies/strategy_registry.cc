// The strategy registry: order, names and one-line descriptions in one table.
#include "reducer/strategies/strategy.h"

namespace aoti {

const std::vector<StrategyInfo>& Strategies() {
  static const std::vector<StrategyInfo> kStrategies = {
      {"localize_first", "accuracy only: compile once with intermediates exposed, blame the first node that "
                         "diverges on its own (compiled) inputs", &LocalizeFirst, &DiagnoseExposed},
      {"localize_kernel", "compile errors and crashes: map the kernel that failed (the compiler's error, or the last "
                          "kernel launched under AOTI's kernel-name printer) to its nodes and propose them",
       &LocalizeKernel, &DiagnoseKernelNames},
      {"bisect_prefix", "binary search for the shortest failing prefix in topological order", &BisectPrefix},
      {"isolate_tail", "keep only the last 1, 2, 4, ... nodes of the current program", &IsolateTail},
      {"remove_outputs", "keep one output, or drop half of them, then eliminate dead code", &RemoveOutputs},
      {"delta_debugging", "replace windows of G nodes by inputs (G halving to 1), then eliminate dead code",
       &DeltaDebugging},
      {"reduce_body", "control flow kept (the lifted program does not fail): delta debugging inside the body a cond "
                      "took, a loop's body or a region, each cut edge passed in from the recorded run",
       &ReduceBody},
  };
  return kStrategies;
}

const StrategyInfo* FindStrategy(const std::string& name) {
  for (const auto& s : Strategies()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

}  // namespace aoti
