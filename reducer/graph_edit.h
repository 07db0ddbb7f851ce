// Graph edits over a Program, each producing a valid program that torch.export.load
// accepts (the reducer's candidates):
//
//   KeepNodes: keep a subset of nodes. A value a kept node reads but no kept node makes
//     becomes a user input (its concrete value comes from the eager run: a cut edge);
//     parameters, buffers and constants stay what they were. The outputs are either the
//     current outputs that kept nodes still make (kPreserve, then dead code goes), or
//     every value kept nodes make that a removed node or a current output read
//     (kFrontier: the cut edges going forward become outputs), or only what the last
//     kept node makes (kLast, as upstream's suffix truncation does: it exposes no other
//     intermediate, so a different bug upstream of the cut cannot take over).
//   DropOutputs: remove user outputs, then dead code.
//   EliminateDeadCode / RemoveUnusedInputs: the clean-ups every candidate gets.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "harness/util/errors.h"
#include "harness/program/program.h"

namespace aoti {

enum class OutputMode { kPreserve, kFrontier, kLast };

// EditRefused: this edit cannot be made on this program (a cut at a symbolic value). A
// strategy catches it and tries another edit; every other error ends the reduction.
class EditRefused : public HarnessError {
 public:
  using HarnessError::HarnessError;
};

// KeepNodes: keep[i] says whether node i stays. A symbolic int the kept nodes read but
// no longer get is made again (aten.sym_size.int) from an input tensor that has a
// dimension of exactly that symbol, so the dimension stays dynamic within its range;
// without one it is specialised to the value export observed. A data-dependent size (an
// unbacked symbol, u0) stays symbolic where a kept node binds it (the mask, nonzero or item
// is kept); where the edit cuts its binding node away, it is specialised everywhere to the
// value the recorded run observed (Program::observed_symbols), so the cut edge becomes an
// input of the observed size. Throws EditRefused when none of this is possible (a symbolic
// float or bool, or a size with no recorded value).
Program KeepNodes(const Program& program, const std::vector<bool>& keep, OutputMode mode);

Program DropOutputs(const Program& program, const std::set<std::string>& outputs);

// EliminateDeadCode removes nodes none of whose values is read or returned (nodes with
// no outputs, such as metadata asserts, go with the values they check).
Program EliminateDeadCode(const Program& program);

// RemoveUnusedInputs drops inputs (user inputs, parameters, buffers, constants) that no
// node reads and no output returns.
Program RemoveUnusedInputs(const Program& program);

// ExposeIntermediates: the program with every floating value a node produces also
// returned as a user output (after the existing outputs), dead code removed.
Program ExposeIntermediates(const Program& program);

// FinishEdit: after an edit of nodes and specs, the graph's inputs and outputs rebuilt from
// the specs, the root call signature rewritten to match, and the metadata of values no node
// or spec names any more dropped. Every edit here ends with it.
void FinishEdit(Program* p);

// UserOutputsByName: a compiled model's outputs (the user outputs only, in order) by
// value name. Buffer mutations and other non-user outputs may come first in the output
// specs; they are skipped, not paired.
std::map<std::string, at::Tensor> UserOutputsByName(const Program& program,
                                                    const std::vector<at::Tensor>& user_outputs);

// DynamicShapeNotes: what a reduced program kept of the original's dynamic shapes, one
// line each: its dynamic input dimensions (symbol and range), and the symbolic ints it
// specialised to the value export observed. Empty for a static program.
std::vector<std::string> DynamicShapeNotes(const Program& original, const Program& reduced);

// TensorArg: the Argument union naming tensor value `name` ({"as_tensor": {"name": ...}}).
nlohmann::json TensorArg(const std::string& name);

// UserInputSpec: an input spec making tensor value `name` a user input of the program.
InputSpecEntry UserInputSpec(const std::string& name);

// AliasClasses: the program's values grouped by the memory they may share (a view and its
// base, an in-place result and its self, from the operators' alias annotations), each class
// named by one representative.
class AliasClasses {
 public:
  explicit AliasClasses(const Program& program);
  // Of: the representative of v's class (v itself when it shares with nothing).
  std::string Of(const std::string& v);

 private:
  std::map<std::string, std::string> parent_;
};

// RenameValues: an Argument union with the value names `rename` maps replaced (literals and
// subgraphs, which are scopes of their own, as they are).
nlohmann::json RenameValues(const nlohmann::json& arg, const std::map<std::string, std::string>& rename);

// UserInputNames: the value names of the program's user inputs, in order.
std::vector<std::string> UserInputNames(const Program& program);

// ShortTarget: "torch.ops.aten.relu.default" -> "aten.relu.default" (others unchanged).
std::string ShortTarget(const std::string& target);

// OperatorNames: the node targets, short ("aten.relu.default"), in order, those inside
// subgraphs after their higher-order op's.
std::vector<std::string> OperatorNames(const Program& program);

// OperatorOf: the operator a node calls, short: its target's; for a higher-order op around
// one op (an autocast region LiftControlFlow made, a cond reduce_body cut down to it; clones
// of recorded values aside), that op's.
std::string OperatorOf(const Node& node);

// CulpritOperator: the operator of the culprit `culprit` names in `program`: a top-level
// node's name, or the address of a node inside control flow kept around it
// (while_loop/while_loop_body_graph_0/relu); "" when the program has no such node.
std::string CulpritOperator(const Program& program, const std::string& culprit);

}  // namespace aoti
