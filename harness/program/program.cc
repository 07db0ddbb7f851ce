#include "harness/program/program.h"

#include <cctype>

#include "harness/util/errors.h"
#include "harness/util/json_util.h"

namespace aoti {
namespace {

using json = nlohmann::json;

const std::vector<std::pair<const char*, InputKind>>& InputKinds() {
  static const auto* kinds = new std::vector<std::pair<const char*, InputKind>>{
      {"user_input", InputKind::kUserInput},
      {"parameter", InputKind::kParameter},
      {"buffer", InputKind::kBuffer},
      {"tensor_constant", InputKind::kTensorConstant},
      {"custom_obj", InputKind::kCustomObj},
      {"token", InputKind::kToken},
      {"constant_input", InputKind::kConstantInput},
  };
  return *kinds;
}

const std::vector<std::pair<const char*, OutputKind>>& OutputKinds() {
  static const auto* kinds = new std::vector<std::pair<const char*, OutputKind>>{
      {"user_output", OutputKind::kUserOutput},
      {"buffer_mutation", OutputKind::kBufferMutation},
      {"parameter_mutation", OutputKind::kParameterMutation},
      {"user_input_mutation", OutputKind::kUserInputMutation},
      {"loss_output", OutputKind::kLossOutput},
      {"token", OutputKind::kToken},
  };
  return *kinds;
}

}  // namespace

const char* InputKindName(InputKind kind) {
  for (const auto& [key, k] : InputKinds()) {
    if (k == kind) return key;
  }
  return "input";
}

namespace {

// The field naming the FQN in each input spec kind.
const char* TargetField(InputKind kind) {
  switch (kind) {
    case InputKind::kParameter: return "parameter_name";
    case InputKind::kBuffer: return "buffer_name";
    case InputKind::kTensorConstant: return "tensor_constant_name";
    case InputKind::kCustomObj: return "custom_obj_name";
    default: return nullptr;
  }
}

const char* TargetField(OutputKind kind) {
  switch (kind) {
    case OutputKind::kBufferMutation: return "buffer_name";
    case OutputKind::kParameterMutation: return "parameter_name";
    case OutputKind::kUserInputMutation: return "user_input_name";
    default: return nullptr;
  }
}

std::string TensorNameOf(const json& arg) {
  if (arg.is_object() && arg.contains("as_tensor")) return arg.at("as_tensor").at("name").get<std::string>();
  if (arg.is_object() && arg.contains("name") && arg.at("name").is_string()) return arg.at("name").get<std::string>();
  return "";
}

InputSpecEntry ParseInputSpec(const json& spec) {
  for (const auto& [key, kind] : InputKinds()) {
    if (!spec.contains(key)) continue;
    InputSpecEntry e;
    e.kind = kind;
    e.raw = spec.at(key);
    if (kind == InputKind::kConstantInput) {
      e.value_name = e.raw.at("name").get<std::string>();
      e.arg = e.raw.at("value");
    } else {
      e.arg = e.raw.at("arg");
      e.value_name = TensorNameOf(e.arg);
    }
    if (const char* field = TargetField(kind)) e.target = e.raw.at(field).get<std::string>();
    return e;
  }
  throw json::other_error::create(501, "unknown input spec kind: " + spec.dump(), &spec);
}

OutputSpecEntry ParseOutputSpec(const json& spec) {
  OutputSpecEntry e;
  e.raw = spec;
  e.kind = OutputKind::kOther;
  for (const auto& [key, kind] : OutputKinds()) {
    if (!spec.contains(key)) continue;
    e.kind = kind;
    const json& body = spec.at(key);
    e.arg = body.at("arg");
    e.value_name = TensorNameOf(e.arg);
    if (const char* field = TargetField(kind)) e.target = body.at(field).get<std::string>();
    return e;
  }
  if (!spec.is_object() || spec.size() != 1 || !spec.begin().value().is_object()) {
    throw HarnessError("an output spec is " + spec.dump() + ", expected an object of one kind (user_output, ...)");
  }
  e.arg = spec.begin().value().value("arg", json());
  e.value_name = TensorNameOf(e.arg);
  return e;
}

json InputSpecToJson(const InputSpecEntry& e) {
  for (const auto& [key, kind] : InputKinds()) {
    if (kind != e.kind) continue;
    json body = e.raw.is_object() ? e.raw : json::object();
    if (kind == InputKind::kConstantInput) {
      body["name"] = e.value_name;
      body["value"] = e.arg;
    } else if (kind == InputKind::kUserInput || kind == InputKind::kToken ||
               kind == InputKind::kCustomObj) {
      body["arg"] = e.arg;
    } else {
      body["arg"] = json{{"name", e.value_name}};
    }
    if (const char* field = TargetField(kind)) body[field] = e.target;
    if (kind == InputKind::kBuffer && !body.contains("persistent")) body["persistent"] = true;
    return json{{key, body}};
  }
  return json::object();
}

json OutputSpecToJson(const OutputSpecEntry& e) {
  for (const auto& [key, kind] : OutputKinds()) {
    if (kind != e.kind) continue;
    json body = e.raw.is_object() && e.raw.contains(key) ? e.raw.at(key) : json::object();
    if (kind == OutputKind::kUserOutput) {
      body["arg"] = e.arg;
    } else {
      body["arg"] = json{{"name", e.value_name}};
    }
    if (const char* field = TargetField(kind)) body[field] = e.target;
    return json{{key, body}};
  }
  return e.raw;
}

}  // namespace

void ArgumentValueNames(const json& arg, std::vector<std::string>* names) {
  if (!arg.is_object() || arg.size() != 1) return;
  const std::string& key = arg.begin().key();
  const json& v = arg.begin().value();
  if (key == "as_tensor") {
    names->push_back(v.at("name").get<std::string>());
  } else if (key == "as_tensors") {
    for (const auto& t : v) names->push_back(t.at("name").get<std::string>());
  } else if (key == "as_optional_tensors") {
    for (const auto& t : v) {
      if (t.contains("as_tensor")) names->push_back(t.at("as_tensor").at("name").get<std::string>());
    }
  } else if (key == "as_optional_tensor") {
    if (v.contains("as_tensor")) names->push_back(v.at("as_tensor").at("name").get<std::string>());
  } else if (key == "as_sym_int" || key == "as_sym_float" || key == "as_sym_bool") {
    if (v.is_object() && v.contains("as_name")) names->push_back(v.at("as_name").get<std::string>());
  } else if (key == "as_sym_ints" || key == "as_sym_floats" || key == "as_sym_bools") {
    for (const auto& e : v) {
      if (e.is_object() && e.contains("as_name")) names->push_back(e.at("as_name").get<std::string>());
    }
  }
}

std::vector<std::string> NodeInputNames(const Node& node) {
  std::vector<std::string> names;
  for (const auto& a : node.inputs) ArgumentValueNames(a.arg, &names);
  return names;
}

std::vector<std::string> NodeOutputNames(const Node& node) {
  std::vector<std::string> names;
  for (const auto& o : node.outputs) ArgumentValueNames(o, &names);
  return names;
}

DimSpec DimFromJson(const json& d) {
  DimSpec dim;
  if (d.contains("as_int")) {
    dim.size = JsonInt(d.at("as_int"), "a size");
  } else if (d.contains("as_expr")) {
    dim.sym = d.at("as_expr").value("expr_str", "?");
    // A plain symbol is serialized as sympy's srepr: "Symbol('s77', positive=True, integer=True)".
    const std::string prefix = "Symbol('";
    if (dim.sym.compare(0, prefix.size(), prefix) == 0) {
      const size_t end = dim.sym.find('\'', prefix.size());
      if (end != std::string::npos) dim.sym = dim.sym.substr(prefix.size(), end - prefix.size());
    }
    const auto& hint = d.at("as_expr").value("hint", json());
    if (hint.is_object() && hint.contains("as_int")) dim.size = JsonInt(hint.at("as_int"), "a size hint");
  } else {
    dim.sym = d.dump();
  }
  return dim;
}

TensorMeta TensorMetaFromJson(const std::string& name, const json& meta, const std::string& what);

namespace {

TensorMeta ParseTensorMeta(const std::string& name, const json& meta, const std::string& what) {
  TensorMeta m;
  m.dtype = ScalarTypeFromSchema(JsonInt32(meta.at("dtype"), what + " value '" + name + "' dtype"),
                                 what + " value '" + name + "'");
  for (const auto& d : meta.at("sizes")) m.sizes.push_back(DimFromJson(d));
  for (const auto& d : meta.value("strides", json::array())) m.strides.push_back(DimFromJson(d));
  if (meta.contains("device")) m.device = meta.at("device").value("type", "cpu");
  return m;
}

// A node's name: its own, else its first output's, else node_<index>.
std::string NodeName(const json& n, const Node& node, size_t index) {
  if (n.contains("name") && n.at("name").is_string()) return n.at("name").get<std::string>();
  if (!node.outputs.empty()) {
    const json& o = node.outputs.front();
    const json& body = o.is_object() && o.size() == 1 ? o.begin().value() : json();
    if (body.is_object() && body.contains("name")) return body.at("name").get<std::string>();
    if (body.is_object() && body.contains("as_name")) return body.at("as_name").get<std::string>();
    if (body.is_array() && !body.empty() && body[0].is_object() && body[0].contains("name")) {
      return body[0].at("name").get<std::string>();
    }
  }
  return "node_" + std::to_string(index);
}

SchemaVersion ParseSchemaVersion(const json& doc, const std::string& what) {
  SchemaVersion version;
  try {
    const auto& v = doc.at("schema_version");
    version = {JsonInt32(v.at("major"), what + ": schema_version.major"),
               JsonInt32(v.at("minor"), what + ": schema_version.minor")};
  } catch (const json::exception& e) {
    throw HarnessError(what + ": the program has no readable schema_version: " + e.what());
  }
  if (version.major != kSupportedSchemaMajor) {
    throw HarnessError(what + ": program schema version " + std::to_string(version.major) + "." +
                       std::to_string(version.minor) + " is not supported; this harness reads major version " +
                       std::to_string(kSupportedSchemaMajor));
  }
  return version;
}

}  // namespace

Node ParseNode(const json& n, size_t index, const std::string& what) {
  Node node;
  node.target = n.at("target").get<std::string>();
  for (const auto& in : n.at("inputs")) {
    NamedArgument a;
    a.name = in.at("name").get<std::string>();
    a.arg = in.at("arg");
    a.kind = in.value("kind", json()).is_number() ? JsonInt32(in.at("kind"), what + ": argument kind") : 0;
    node.inputs.push_back(std::move(a));
  }
  for (const auto& out : n.at("outputs")) node.outputs.push_back(out);
  const json metadata = n.value("metadata", json::object());
  for (const auto& [k, val] : metadata.items()) {
    if (val.is_string()) node.metadata[k] = val.get<std::string>();
  }
  node.raw = n;
  for (const char* key : {"target", "inputs", "outputs", "metadata"}) node.raw.erase(key);
  node.name = NodeName(n, node, index);
  return node;
}

TensorMeta TensorMetaFromJson(const std::string& name, const json& meta, const std::string& what) {
  return ParseTensorMeta(name, meta, what);
}

json NodeToJson(const Node& n) {
  json j = n.raw.is_object() ? n.raw : json::object();
  j["target"] = n.target;
  j["inputs"] = json::array();
  for (const auto& a : n.inputs) j["inputs"].push_back(json{{"name", a.name}, {"arg", a.arg}, {"kind", a.kind}});
  j["outputs"] = n.outputs;
  j["metadata"] = n.metadata;
  return j;
}

std::string HigherOrderName(const Node& node) {
  const std::string prefix = "torch.ops.higher_order.";
  return node.target.rfind(prefix, 0) == 0 ? node.target.substr(prefix.size()) : "";
}

std::vector<size_t> SubgraphArgs(const Node& node) {
  std::vector<size_t> out;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const json& a = node.inputs[i].arg;
    if (a.is_object() && a.contains("as_graph")) out.push_back(i);
  }
  return out;
}

Graph ParseSubgraph(const Node& node, size_t index, const std::string& what) {
  if (index >= node.inputs.size() || !node.inputs[index].arg.is_object() || !node.inputs[index].arg.contains("as_graph")) {
    throw HarnessError(what + ": input " + std::to_string(index) + " of node '" + node.name + "' holds no subgraph");
  }
  const json& body = node.inputs[index].arg.at("as_graph");
  Graph g;
  std::string where = "its subgraph";
  try {
    g.name = body.value("name", "");
    where = "subgraph '" + g.name + "'";
    const json& graph = body.at("graph");
    for (const auto& a : graph.at("inputs")) g.inputs.push_back(a);
    for (const auto& a : graph.at("outputs")) g.outputs.push_back(a);
    const json tensor_values = graph.value("tensor_values", json::object());
    for (const auto& [name, meta] : tensor_values.items()) g.tensor_values.emplace(name, ParseTensorMeta(name, meta, what));
    const json& nodes = graph.at("nodes");
    for (size_t i = 0; i < nodes.size(); ++i) g.nodes.push_back(ParseNode(nodes[i], i, what));
    g.raw = graph;
    for (const char* key : {"inputs", "outputs", "nodes"}) g.raw.erase(key);
  } catch (const json::exception& e) {
    throw HarnessError(what + ": malformed " + where + " of node '" + node.name + "': " + e.what());
  }
  return g;
}

void SetSubgraph(Node* node, size_t index, const Graph& g) {
  json graph = g.raw.is_object() ? g.raw : json::object();
  graph["inputs"] = g.inputs;
  graph["outputs"] = g.outputs;
  json nodes = json::array();
  for (const auto& n : g.nodes) nodes.push_back(NodeToJson(n));
  graph["nodes"] = std::move(nodes);
  // The serialized metadata (raw's, as written) of the values the graph still has.
  json tv = json::object();
  const json written = graph.value("tensor_values", json::object());
  for (const auto& [name, meta] : g.tensor_values) {
    if (written.contains(name)) tv[name] = written.at(name);
  }
  graph["tensor_values"] = std::move(tv);
  node->inputs[index].arg = json{{"as_graph", {{"name", g.name}, {"graph", std::move(graph)}}}};
}

void ForEachNode(const std::vector<Node>& nodes, const std::function<void(const Node&, const std::string&)>& fn,
                 const std::string& scope) {
  for (const auto& node : nodes) {
    fn(node, scope);
    for (size_t i : SubgraphArgs(node)) {
      const Graph g = ParseSubgraph(node, i, "the program");
      ForEachNode(g.nodes, fn, NodePath(node, scope) + "/" + g.name);
    }
  }
}

size_t CountNodes(const std::vector<Node>& nodes) {
  size_t n = 0;
  ForEachNode(nodes, [&](const Node&, const std::string&) { ++n; });
  return n;
}

std::string NodePath(const Node& node, const std::string& scope) {
  auto it = node.metadata.find(kPathKey);
  if (it != node.metadata.end() && !it->second.empty()) return it->second;
  return scope.empty() ? node.name : scope + "/" + node.name;
}

std::string AddressAsName(const std::string& address) {
  std::string out;
  for (char c : address) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v_" + out;
  return out;
}

const json* SymIntValues(const json& graph_json) {
  auto it = graph_json.find("sym_int_values");
  return it != graph_json.end() && it->is_object() ? &*it : nullptr;
}

Program Program::Parse(const std::string& json_text, const std::string& what) {
  Program p;
  try {
    p.document = json::parse(json_text);
  } catch (const json::exception& e) {
    throw HarnessError(what + ": the program is not valid JSON: " + e.what());
  }
  const json& doc = p.document;
  p.schema_version = ParseSchemaVersion(doc, what);
  std::string where = "graph";
  try {
    const json& gm = doc.at("graph_module");
    const json& graph = gm.at("graph");
    for (const auto& a : graph.at("inputs")) p.graph_inputs.push_back(a);
    for (const auto& a : graph.at("outputs")) p.graph_outputs.push_back(a);
    for (const auto& [name, meta] : graph.at("tensor_values").items()) {
      where = "tensor_values['" + name + "']";
      p.tensor_values.emplace(name, ParseTensorMeta(name, meta, what));
    }
    const json& nodes = graph.at("nodes");
    for (size_t i = 0; i < nodes.size(); ++i) {
      where = "node " + std::to_string(i);
      p.nodes.push_back(ParseNode(nodes[i], i, what));
    }
    where = "signature";
    const json& sig = gm.at("signature");
    for (const auto& s : sig.at("input_specs")) p.input_specs.push_back(ParseInputSpec(s));
    for (const auto& s : sig.at("output_specs")) {
      try {
        p.output_specs.push_back(ParseOutputSpec(s));
      } catch (const HarnessError& e) {
        throw HarnessError(what + ": malformed program at " + where + ": " + e.what());
      }
    }
    where = "range_constraints";
    const json ranges = doc.value("range_constraints", json::object());
    for (const auto& [sym, r] : ranges.items()) {
      SymRange range;
      if (r.contains("min_val") && r.at("min_val").is_number()) range.min = JsonInt(r.at("min_val"), what + ": range min_val");
      if (r.contains("max_val") && r.at("max_val").is_number()) range.max = JsonInt(r.at("max_val"), what + ": range max_val");
      p.range_constraints[sym] = range;
    }
  } catch (const json::exception& e) {
    throw HarnessError(what + ": malformed program at " + where + ": " + e.what());
  }
  return p;
}

std::string Program::ToJson() const {
  json doc = document;
  json& gm = doc["graph_module"];
  json& graph = gm["graph"];
  graph["inputs"] = graph_inputs;
  graph["outputs"] = graph_outputs;
  json nodes_json = json::array();
  for (const auto& n : nodes) nodes_json.push_back(NodeToJson(n));
  graph["nodes"] = std::move(nodes_json);
  json& sig = gm["signature"];
  sig["input_specs"] = json::array();
  for (const auto& s : input_specs) sig["input_specs"].push_back(InputSpecToJson(s));
  sig["output_specs"] = json::array();
  for (const auto& s : output_specs) sig["output_specs"].push_back(OutputSpecToJson(s));
  return doc.dump();
}

ProgramSignature ParseProgramSignature(const std::string& json_text, const std::string& what) {
  return Program::Parse(json_text, what).Signature();
}

ProgramSignature Program::Signature() const {
  ProgramSignature sig;
  sig.schema_version = schema_version;
  for (const auto& s : input_specs) {
    switch (s.kind) {
      case InputKind::kUserInput: {
        if (s.value_name.empty()) break;  // non-tensor user inputs are not listed
        TensorSpec t;
        t.name = s.value_name;
        auto it = tensor_values.find(s.value_name);
        if (it != tensor_values.end()) {
          t.dtype = it->second.dtype;
          t.sizes = it->second.sizes;
        }
        sig.user_inputs.push_back(std::move(t));
        break;
      }
      case InputKind::kParameter: sig.parameters.push_back(s.target); break;
      case InputKind::kBuffer: sig.buffers.push_back(s.target); break;
      case InputKind::kTensorConstant: sig.constants.push_back(s.target); break;
      default: break;
    }
  }
  for (const auto& s : output_specs) {
    if (s.kind == OutputKind::kUserOutput) {
      sig.user_outputs.push_back(!s.value_name.empty()                     ? s.value_name
                                 : s.arg.is_object() && s.arg.size() == 1 ? s.arg.begin().key()
                                                                          : s.arg.dump());
    } else if (s.kind == OutputKind::kBufferMutation) {
      sig.mutated_buffers.push_back(s.target);
    }
  }
  return sig;
}

bool ParseTarget(const std::string& target, std::string* name, std::string* overload) {
  const std::string prefix = "torch.ops.";
  if (target.compare(0, prefix.size(), prefix) != 0) return false;
  const std::string rest = target.substr(prefix.size());
  const size_t a = rest.find('.');
  if (a == std::string::npos) return false;
  const size_t b = rest.find('.', a + 1);
  const std::string ns = rest.substr(0, a);
  const std::string op = rest.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
  *overload = b == std::string::npos ? "" : rest.substr(b + 1);
  if (*overload == "default") overload->clear();
  *name = ns + "::" + op;
  return true;
}

}  // namespace aoti
