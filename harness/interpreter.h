// Interpreter: runs a torch.export program in C++, node by node, calling each node's
// operator through c10::Dispatcher with a boxed stack (no Python at run time).
//
// Float64 mode promotes floating inputs, parameters, buffers and constants to float64 and
// rewrites floating dtype arguments (convert_element_type, dtype=) to float64: the
// reference the accuracy verdict uses. Intermediates: an observer sees every value a
// node produces, and chosen values (or all) are returned; everything else is freed after
// its last use, so memory stays bounded by what the graph itself keeps alive.
//
// Operators are resolved when the interpreter is built: an unregistered operator, an
// unsupported argument kind or a higher-order op is a HarnessError naming the node, its
// target and the construct, before anything runs.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "harness/program.h"
#include "harness/program_state.h"
#include "harness/pt2_archive.h"

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
};

struct RunOptions {
  // Called with every value a node produces, in execution order.
  std::function<void(const Node& node, const std::string& value_name, const c10::IValue& value)>
      observer;
  std::set<std::string> keep;  // value names to return in RunResult::intermediates
  bool keep_all = false;       // return every value (memory grows with the graph)
};

struct RunResult {
  std::vector<c10::IValue> outputs;  // the user outputs, in signature order
  std::map<std::string, c10::IValue> intermediates;
  size_t peak_live_values = 0;       // most values held at once during the run
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
  bool fp64() const { return options_.fp64; }

  struct Step;  // a node, resolved (public for the implementation's helpers)

 private:
  Program program_;
  ProgramState state_;
  InterpreterOptions options_;
  std::vector<std::unique_ptr<Step>> steps_;
};

}  // namespace aoti
