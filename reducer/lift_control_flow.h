// LiftControlFlow: a program whose control flow is lifted into its own graph, as it ran on
// the recorded inputs, so that the reducer's straight-line machinery (localization, the
// kernel map, bisection, delta debugging) sees every op of it:
//
//   cond                        its branch taken (the first time it ran), inlined
//   while_loop                  its body's first iteration, inlined (the loop ran at least once)
//   scan                        its combine graph's first step; its stacked outputs are that
//                               step's, expanded to the loop's length
//   map_impl                    its body on the first slice, expanded likewise
//   wrap_with_set_grad_enabled  its region inlined (grad mode changes no value here)
//   wrap_with_autocast          distributed: each op of its region in a region of its own
//                               (autocast is a per-op policy, so each op computes as it did)
//
// Nested control flow is lifted from the inside out. A lifted node keeps its address in the
// original program in its metadata (kPathKey, "cond/true_graph_0/relu"); its values get fresh
// names ("cond_true_graph_0_relu"). A higher-order op that did not run (a loop of zero
// iterations, a cond never reached) stays as it is.
//
// The lifted program computes the same values as the original for a cond and the wrappers;
// for a loop, the values of its first iteration (its outputs keep their shapes). Whether it
// still fails the way the original did is for a compile to say: the reducer keeps it only then.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/program/interpreter.h"
#include "harness/program/program.h"

namespace aoti {

struct LiftedProgram {
  Program program;
  // One line per higher-order op lifted ("cond 'cond': its true_graph_0 taken"), and per one
  // kept as it is, with why.
  std::vector<std::string> lifted, kept;
};

// HasControlFlow: the program's graph holds a higher-order op.
bool HasControlFlow(const Program& program);

// LiftControlFlow: `taken` is what each higher-order op did in the recorded eager run, by
// its address (RunResult::control_flow).
LiftedProgram LiftControlFlow(const Program& program, const std::map<std::string, ControlFlowTaken>& taken);

}  // namespace aoti
