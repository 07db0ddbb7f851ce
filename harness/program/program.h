// Program: a torch.export program (models/<name>.json) as a small C++ graph.
//
// Nodes keep their target, named arguments and outputs; the signature says which graph
// inputs are user inputs, parameters, buffers, constants, and which outputs are user
// outputs or buffer mutations. The parsed JSON document is kept whole in `document`, so
// fields this code does not use survive an edit and ToJson() writes them back.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <c10/core/ScalarType.h>
#include <nlohmann/json.hpp>

#include "harness/program/program_signature.h"

namespace aoti {

struct NamedArgument {
  std::string name;      // the operator schema's argument name
  nlohmann::json arg;    // a single-key Argument union, e.g. {"as_tensor": {"name": "x"}}
  int kind = 0;          // 1 positional, 2 keyword, 0 unknown
};

struct Node {
  std::string name;      // the node's own name, else its first output's name
  std::string target;    // e.g. "torch.ops.aten.addmm.default"
  std::vector<NamedArgument> inputs;
  std::vector<nlohmann::json> outputs;  // Argument unions
  std::map<std::string, std::string> metadata;
  nlohmann::json raw = nlohmann::json::object();  // other fields, written back as they were
};

struct TensorMeta {
  c10::ScalarType dtype = c10::ScalarType::Undefined;
  std::vector<DimSpec> sizes;
  std::vector<DimSpec> strides;
  std::string device = "cpu";
};

enum class InputKind { kUserInput, kParameter, kBuffer, kTensorConstant, kCustomObj, kToken, kConstantInput };
enum class OutputKind { kUserOutput, kBufferMutation, kParameterMutation, kUserInputMutation, kLossOutput, kToken, kOther };

// InputKindName: the schema's name of an input kind ("parameter", "buffer", "custom_obj", ...).
const char* InputKindName(InputKind kind);

struct InputSpecEntry {
  InputKind kind = InputKind::kUserInput;
  std::string value_name;  // the graph value the input binds (e.g. "p_fc1_weight", "x")
  std::string target;      // FQN of the parameter / buffer / constant; empty for user inputs
  nlohmann::json arg;      // the user input's Argument (or the constant input's value)
  nlohmann::json raw = nlohmann::json::object();  // the spec body, for fields not modelled

  // StoredWithConstants: true where torch.export.save writes this input's tensor to
  // data/constants/ (tensor constants, lifted constants, non-persistent buffers) rather
  // than data/weights/ (parameters, persistent buffers).
  bool StoredWithConstants() const {
    if (kind == InputKind::kTensorConstant) return true;
    return kind == InputKind::kBuffer && raw.is_object() && raw.value("persistent", true) == false;
  }
};

struct OutputSpecEntry {
  OutputKind kind = OutputKind::kUserOutput;
  nlohmann::json arg;      // the Argument
  std::string value_name;  // for tensor arguments
  std::string target;      // buffer / parameter / user input that is mutated
  nlohmann::json raw = nlohmann::json::object();  // the whole OutputSpec union
};

// Graph: a higher-order op's subgraph (an as_graph argument: a cond's branch, a loop's
// body, an autocast region): its own name scope, with its inputs and outputs (Argument
// unions), its nodes and its tensor metadata. `name` is its attribute name
// ("true_graph_0"); `raw` keeps the other fields as written (sym_*_values, ...), and the
// serialized tensor_values: an edit that makes a value adds its metadata there too.
struct Graph {
  std::string name;
  std::vector<nlohmann::json> inputs, outputs;
  std::vector<Node> nodes;
  std::map<std::string, TensorMeta> tensor_values;
  nlohmann::json raw = nlohmann::json::object();
};

// HigherOrderName: a higher-order op node's op ("cond", "while_loop", "map_impl", "scan",
// "wrap_with_autocast", "wrap_with_set_grad_enabled", ...); "" for any other node.
std::string HigherOrderName(const Node& node);

// SubgraphArgs: the indices of the node's inputs that hold a subgraph, in order.
std::vector<size_t> SubgraphArgs(const Node& node);

// ParseSubgraph: the subgraph held by node.inputs[index]. Throws HarnessError naming
// `what` when that input holds none, or a malformed one.
Graph ParseSubgraph(const Node& node, size_t index, const std::string& what);

// SetSubgraph: node.inputs[index] holds `graph` from now on: its inputs, outputs and nodes,
// raw's other fields, and raw's tensor_values of the values in graph.tensor_values.
void SetSubgraph(Node* node, size_t index, const Graph& graph);

// CountNodes: the nodes, with those inside subgraphs (at any depth) counted too.
size_t CountNodes(const std::vector<Node>& nodes);

// ForEachNode: `fn` on every node, those inside subgraphs too (depth first, each node
// before its subgraphs' nodes), with the address of the graph it is in ("" for the
// program's own graph, "cond/true_graph_0" inside a branch).
void ForEachNode(const std::vector<Node>& nodes, const std::function<void(const Node&, const std::string& scope)>& fn,
                 const std::string& scope = "");

// kPathKey: the node metadata that holds a node's address in the original program, for a
// node the reducer lifted out of a subgraph ("cond/true_graph_0/relu"). Torch's loader
// ignores metadata it does not know, so the address travels with the node through edits.
inline constexpr char kPathKey[] = "aoti_path";

// NodePath: a node's address as reports say it: its kPathKey metadata, else `scope` +
// its name ("" scope: the top-level graph).
std::string NodePath(const Node& node, const std::string& scope = "");

// AddressAsName: an address as a value name of the program's own graph
// ("cond/true_graph_0/relu" -> "cond_true_graph_0_relu"): what a value of a subgraph is
// called where the reducer lifts it out or passes it in.
std::string AddressAsName(const std::string& address);

// SymIntValues: a serialized graph's sym_int_values (value name -> SymInt), the program's
// graph or a subgraph's; nullptr when it has none.
const nlohmann::json* SymIntValues(const nlohmann::json& graph_json);

// ControlFlowTaken: what one higher-order op did the first time it ran: the branch a cond
// took (0: true_graph, 1: false_graph), the iterations of a loop (while_loop, map_impl, scan).
struct ControlFlowTaken {
  int branch = -1;
  int64_t iterations = -1;
};

// SymRange: the range_constraints entry of a symbol (e.g. "s0": [2, 1024]).
struct SymRange {
  int64_t min = 0;
  int64_t max = INT64_MAX;
};

class Program {
 public:
  // Parse throws HarnessError naming `what` for malformed JSON, an unknown schema major
  // version, or a missing field.
  static Program Parse(const std::string& json_text, const std::string& what);

  // ToJson writes the program back, with any edits to nodes, inputs, outputs and
  // signature, and every field this code does not model unchanged.
  std::string ToJson() const;

  SchemaVersion schema_version;
  std::vector<nlohmann::json> graph_inputs;   // Argument unions
  std::vector<nlohmann::json> graph_outputs;  // Argument unions
  std::vector<Node> nodes;
  std::map<std::string, TensorMeta> tensor_values;
  std::map<std::string, SymRange> range_constraints;
  std::vector<InputSpecEntry> input_specs;
  std::vector<OutputSpecEntry> output_specs;
  nlohmann::json document;
  // observed_symbols: the unbacked symbols (u0) as a recorded eager run bound them. Not
  // written by ToJson: the graph editor specialises a symbol to its observed value when an
  // edit cuts away the node that binds it (reducer/graph_edit.h).
  std::map<std::string, int64_t> observed_symbols;
  // observed_control_flow: what each higher-order op did in that run, by its address (the
  // branch taken, the iterations); not written by ToJson either.
  std::map<std::string, ControlFlowTaken> observed_control_flow;

  // Signature is the calling convention view used by preflight and tests.
  ProgramSignature Signature() const;
};

// ArgumentValueNames appends the graph values an Argument union names: tensors, tensor
// lists, optional tensors and named sym ints/floats/bools (literals name nothing).
void ArgumentValueNames(const nlohmann::json& arg, std::vector<std::string>* names);

// NodeInputNames / NodeOutputNames: the values a node reads / defines.
std::vector<std::string> NodeInputNames(const Node& node);
std::vector<std::string> NodeOutputNames(const Node& node);

// ParseNode: one serialized node (its index names it when it has no name of its own).
Node ParseNode(const nlohmann::json& n, size_t index, const std::string& what);
// NodeToJson: a node serialized again, with the fields this code does not model as they were.
nlohmann::json NodeToJson(const Node& node);

// TensorMetaFromJson: a serialized TensorMeta (a tensor_values entry) of value `name`.
TensorMeta TensorMetaFromJson(const std::string& name, const nlohmann::json& meta, const std::string& what);

// DimFromJson reads a SymInt ({"as_int": 3} or {"as_expr": {"expr_str": "s0"}}).
DimSpec DimFromJson(const nlohmann::json& j);

// ParseTarget: "torch.ops.aten.addmm.default" -> {"aten::addmm", ""} (the overload
// "default" is ""). False for a target that is not an operator (a Python callable).
bool ParseTarget(const std::string& target, std::string* name, std::string* overload);

}  // namespace aoti
