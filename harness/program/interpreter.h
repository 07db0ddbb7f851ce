// Interpreter: runs a torch.export program in C++, node by node, calling each node's
// operator through c10::Dispatcher with a boxed stack (no Python at run time).
//
// Float64 mode promotes floating inputs, parameters, buffers and constants to float64 and
// rewrites floating dtype arguments (convert_element_type, dtype=) to float64: the
// reference the accuracy verdict uses. Intermediates: an observer sees every value a
// node produces, and chosen values (or all) are returned; everything else is freed after
// its last use, so memory stays bounded by what the graph itself keeps alive.
//
// Higher-order ops run their subgraphs, nested to any depth: cond (a tensor or symbolic
// bool predicate), while_loop, map_impl, scan, wrap_with_autocast (its region under
// autocast, as torch.autocast runs it; the float64 run keeps autocast on, which leaves
// float64 tensors as they are, as upstream's float64 reference does) and
// wrap_with_set_grad_enabled. Each subgraph is a name scope of its own: a value inside one
// is addressed by its path ("cond/true_graph_0/relu"), and a node's messages name it so.
//
// Data-dependent sizes: an unbacked symbol (u0) is bound when the node that makes it runs
// (a boolean mask, nonzero, item), checked against the program's range_constraints and
// against any earlier binding (ProgramConstraintError); the program's own _assert_scalar
// nodes run as any operator does.
//
// Operators are resolved when the interpreter is built: an unregistered operator or a bad
// argument is a HarnessError naming the node and its target, a construct the interpreter
// does not run (another higher-order op) an UnsupportedConstruct, before anything runs.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/core/ivalue.h>

#include "harness/program/program.h"
#include "harness/program/program_state.h"
#include "harness/archive/pt2_archive.h"
#include "harness/util/deadline.h"

namespace aoti {

// MutatedValueNames: the graph values a node writes in place, read from its operator's
// schema (arguments with a write alias, e.g. self of aten::add_ or out= arguments). Empty
// for pure operators and for targets the dispatcher does not know.
std::vector<std::string> MutatedValueNames(const Node& node);

// AliasedValueNames: the graph values a node's outputs may share memory with (the base of
// a view such as slice or transpose, the self of an in-place op), from the schema's alias
// annotations.
std::vector<std::string> AliasedValueNames(const Node& node);

struct InterpreterOptions {
  bool fp64 = false;  // the float64 reference mode
  // device: "" runs each weight and input where it was recorded (a CUDA program's on the
  // GPU); else every weight, constant, input and device= argument on this device ("cpu"
  // for the float64 reference of a device without float64 kernels).
  std::string device;
  // deadline: a run that has not ended by then stops with RunStopped (checked before every
  // node and every loop iteration), naming the node and each loop's iteration; none by
  // default. The check gives eager and float64 the compiled run's timeout under the test's
  // deadline, so a loop that does not end in eager is a verdict, not a test Bazel kills.
  Deadline deadline;
};

struct RunOptions {
  // Called with every value a node produces, in execution order, by its address ("relu",
  // "cond/true_graph_0/relu"); inside a loop's body, at every iteration.
  std::function<void(const Node& node, const std::string& value_name, const c10::IValue& value)>
      observer;
  std::set<std::string> keep;  // value addresses to return in RunResult::intermediates
  bool keep_all = false;       // return every value (memory grows with the graph)
};

struct RunResult {
  std::vector<c10::IValue> outputs;  // the user outputs, in signature order
  // By address; a value made in every iteration of a loop: its first iteration's.
  std::map<std::string, c10::IValue> intermediates;
  size_t peak_live_values = 0;       // most values held at once during the run
  // Each higher-order op by its node's address ("cond", "while_loop/body_graph_0/cond_1").
  std::map<std::string, ControlFlowTaken> control_flow;
  // The unbacked symbols the run bound (u0 -> the size a boolean mask kept); one bound inside
  // a subgraph (a loop's body) binds anew in each call, and is reported at its first.
  std::map<std::string, int64_t> symbols;
};

// PromoteStateToFp64: the state as the float64 reference mode makes it (floating weights
// and constants in float64, tied ones still tied). An fp64 Interpreter given it copies
// nothing more: a caller that builds many of them over one state promotes it once.
ProgramState PromoteStateToFp64(ProgramState state);

class Interpreter {
 public:
  Interpreter(Program program, ProgramState state, InterpreterOptions options = {});
  ~Interpreter();
  static std::unique_ptr<Interpreter> FromArchive(const Pt2Archive& archive,
                                                  const std::string& model,
                                                  InterpreterOptions options = {});

  // Run executes the program on the flat user inputs. Buffer mutations update state().
  RunResult Run(const std::vector<at::Tensor>& user_inputs, const RunOptions& options = {});
  // RunTensors: Run, returning the user outputs as tensors (non-tensors are an error).
  std::vector<at::Tensor> RunTensors(const std::vector<at::Tensor>& user_inputs);

  const Program& program() const { return program_; }
  const ProgramState& state() const { return state_; }
  // SetDeadline: the deadline of the runs from now on (InterpreterOptions::deadline).
  void SetDeadline(Deadline deadline) { options_.deadline = std::move(deadline); }
  bool fp64() const { return options_.fp64; }

  struct Step;       // a node, resolved (public for the implementation's helpers)
  struct GraphPlan;  // a graph's steps: the program's, or a subgraph's
  struct Running;    // one run in progress

 private:
  void ExecuteGraph(const GraphPlan& plan, std::unordered_map<std::string, c10::IValue>* env, Running& run) const;
  std::vector<c10::IValue> RunSubgraph(const GraphPlan& plan, const std::vector<c10::IValue>& inputs,
                                       const Node& caller, Running& run) const;
  void ExecuteHigherOrder(const Step& step, std::vector<c10::IValue> args, const std::string& path,
                          std::unordered_map<std::string, c10::IValue>* env, Running& run) const;
  void BindSymbols(const Step& step, const std::unordered_map<std::string, c10::IValue>& env, Running& run) const;
  [[noreturn]] void StopAtDeadline(const std::string& where) const;
  void Observe(const GraphPlan& plan, const Node& node, const std::unordered_map<std::string, c10::IValue>& env,
               Running& run) const;

  Program program_;
  ProgramState state_;
  InterpreterOptions options_;
  std::unique_ptr<GraphPlan> top_;
};

}  // namespace aoti
