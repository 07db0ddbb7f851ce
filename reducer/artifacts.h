// The reducer's artifacts, written into one directory (each file written aside and moved
// into place, so a reader never sees half a file):
//   original.pt2             the failing program, its inputs and config patches
//   repro.pt2                the minimal program (inputs and compiled model included)
//   repro.py                 standalone: compiles repro.pt2 with the same patches, runs it in a
//                            child process, compares with eager; exit 1 when it reproduces
//   BUILD.bazel, repro_test.cc   the same repro as a harness test (`bazel test :repro_test`)
//   checkpoints/<nodes>.pt2  each accepted step
//   graph.dot                the minimal graph
//   report.md                failure, environment, figures, and which strategy removed what
#pragma once

#include <string>

#include "reducer/reducer.h"

namespace aoti {

// FormatGraph: one line per node, "%relu = aten.relu.default(%linear)", then the outputs.
std::string FormatGraph(const Program& program);

// EnvironmentHeader: torch version and git hash, compiler, CPU ISA, CUDA/nvcc/GPU when present.
std::string EnvironmentHeader(const std::string& package);

// CulpritText: the culprit as a person reads it, "relu (aten.relu.default)", its address in
// the original with its operator where the repro keeps it; "" when the reduction names none.
std::string CulpritText(const ReduceResult& result);

void WriteArtifacts(const ReduceResult& result, const ReduceSpec& spec, const ReduceOptions& options,
                    const std::string& out_dir);

// WriteNotReproduced: report.md (and summary.json, "reduced": false) in `out_dir` for a
// failure that a fresh compile does not reproduce (NotReproducedError), so nothing was
// reduced: the reason, in the words of `message`.
void WriteNotReproduced(const std::string& out_dir, const std::string& failure_class, const std::string& message);

}  // namespace aoti
