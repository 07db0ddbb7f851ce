// Graph edits inside a higher-order op's subgraph, for a failure that shows only with its
// control flow (the lifted program does not fail the same way): the control flow is kept
// and its body is cut down as KeepNodes cuts a program.
//
//   the body edited   a cond's branch taken, a while_loop's, scan's or map_impl's body, an
//                     autocast or grad-mode region (as the recorded run went)
//   a cut edge        a value a kept node reads that no kept node makes becomes a new input
//                     of the body, passed in by the op (a cond's operands, a loop's
//                     additional inputs, a region's operands) from a new input of the
//                     program, named after its address (AddressAsName), whose value is the
//                     recorded run's (the loop's first iteration's)
//   a body output     no kept node makes: a clone of such an input (a subgraph may not
//                     return an input as it is: AOTI refuses the alias)
//   the siblings      a cond's other branch, a while_loop's cond graph take the new inputs too
//   the operands      each passed once, and only those a subgraph still reads; the program's
//                     inputs no node reads any more go
//
// A while_loop keeps the nodes its condition depends on (the counter), so the loop ends as
// it did.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/program/program.h"

namespace aoti {

// BodyToReduce: the subgraph of node `hop` an edit inside it works on (its input index),
// and the body's address ("cond/true_graph_0"); nullopt when the node is no higher-order op,
// or it did not run (a cond never reached, a loop of no iteration).
struct ReducibleBody {
  size_t input = 0;
  std::string address;
  Graph graph;
};
std::optional<ReducibleBody> BodyToReduce(const Program& program, size_t hop);

// KeptForTermination: the body's nodes a while_loop's condition depends on, through the
// carried values it reads (all false for another op).
std::vector<bool> KeptForTermination(const Program& program, size_t hop, const ReducibleBody& body);

// What a body cut down returns: its outputs as they were (kPreserve: one no kept node makes
// is a clone of its recorded value), or what its last kept node makes (kLast: the op's
// results, and the program's outputs, become those; a cond's branch not taken returns
// clones of their recorded values). kLast is refused for a loop, whose body returns what it
// carries.
enum class BodyOutputs { kPreserve, kLast };

// BodyOutputsOf: what a body cut down around node `hop` returns: kLast for a cond and a
// region (their results may change), kPreserve for a loop (it returns what it carries).
BodyOutputs BodyOutputsOf(const Node& hop);

// FlowsFrom: the body's nodes node `from`'s values flow into, through the nodes `through`
// says (`from` itself marked; every node when `through` is empty).
std::vector<bool> FlowsFrom(const Graph& body, size_t from, const std::vector<bool>& through = {});

// KeepBodyNodes: `program` with node `hop`'s body cut down to the nodes `keep` says (see
// above). Throws EditRefused when the cut cannot be made (a symbolic value cut, a value with
// no recorded metadata, kLast on an op whose results other nodes read).
Program KeepBodyNodes(const Program& program, size_t hop, const ReducibleBody& body, const std::vector<bool>& keep,
                      BodyOutputs outputs = BodyOutputs::kPreserve);

// EmptyUntakenBranch: `program` with the branch a cond did not take returning clones of
// what the branch taken returned in the recorded run (passed in as operands, which the branch
// taken takes too, unread): the branch never ran, and need not stay as it was. EditRefused
// for a node that is no cond.
Program EmptyUntakenBranch(const Program& program, size_t hop, const ReducibleBody& taken);

}  // namespace aoti
