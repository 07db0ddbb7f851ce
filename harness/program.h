// Program: a torch.export program (models/<name>.json) as a small C++ graph.
//
// Nodes keep their target, named arguments and outputs; the signature says which graph
// inputs are user inputs, parameters, buffers, constants, and which outputs are user
// outputs or buffer mutations. The parsed JSON document is kept whole in `document`, so
// fields this code does not use survive an edit and ToJson() writes them back.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <c10/core/ScalarType.h>
#include <nlohmann/json.hpp>

#include "harness/program_signature.h"

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

  // Signature is the calling convention view used by preflight and tests.
  ProgramSignature Signature() const;
};

// ArgumentValueNames appends the graph values an Argument union names: tensors, tensor
// lists, optional tensors and named sym ints/floats/bools (literals name nothing).
void ArgumentValueNames(const nlohmann::json& arg, std::vector<std::string>* names);

// NodeInputNames / NodeOutputNames: the values a node reads / defines.
std::vector<std::string> NodeInputNames(const Node& node);
std::vector<std::string> NodeOutputNames(const Node& node);

// DimFromJson reads a SymInt ({"as_int": 3} or {"as_expr": {"expr_str": "s0"}}).
DimSpec DimFromJson(const nlohmann::json& j);

// ParseTarget: "torch.ops.aten.addmm.default" -> {"aten::addmm", ""} (the overload
// "default" is ""). False for a target that is not an operator (a Python callable).
bool ParseTarget(const std::string& target, std::string* name, std::string* overload);

}  // namespace aoti
