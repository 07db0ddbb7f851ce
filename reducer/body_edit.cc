#include "reducer/body_edit.h"

#include <algorithm>
#include <set>

#include "harness/util/errors.h"
#include "reducer/graph_edit.h"

namespace aoti {
namespace {

using json = nlohmann::json;

// Elements: the value names of a list argument (a cond's operands).
std::vector<std::string> Elements(const json& list) {
  std::vector<std::string> out;
  ArgumentValueNames(list, &out);
  return out;
}

std::vector<std::string> Names(const std::vector<json>& args) {
  std::vector<std::string> out;
  for (const auto& a : args) ArgumentValueNames(a, &out);
  return out;
}

// AsProgram: a subgraph as a program of its own (its inputs user inputs, its outputs user
// outputs), so that KeepNodes can cut it.
Program AsProgram(const Program& program, const Graph& g) {
  Program sub;
  sub.schema_version = program.schema_version;
  sub.graph_inputs = g.inputs;
  sub.graph_outputs = g.outputs;
  sub.nodes = g.nodes;
  sub.tensor_values = g.tensor_values;
  sub.range_constraints = program.range_constraints;
  sub.observed_symbols = program.observed_symbols;
  json graph = g.raw;
  graph["inputs"] = g.inputs;
  graph["outputs"] = g.outputs;
  graph["nodes"] = json::array();
  sub.document = {{"schema_version", program.document.at("schema_version")},
                  {"graph_module", {{"graph", graph}, {"signature", {{"input_specs", json::array()},
                                                                      {"output_specs", json::array()}}}}},
                  {"range_constraints", program.document.value("range_constraints", json::object())}};
  for (const auto& a : g.inputs) {
    if (!a.contains("as_tensor")) throw EditRefused("the subgraph '" + g.name + "' takes an input that is not a tensor");
    sub.input_specs.push_back(UserInputSpec(a.at("as_tensor").at("name").get<std::string>()));
  }
  for (const auto& a : g.outputs) {
    if (!a.contains("as_tensor")) throw EditRefused("the subgraph '" + g.name + "' returns a value that is not a tensor");
    OutputSpecEntry e;
    e.kind = OutputKind::kUserOutput;
    e.arg = a;
    e.value_name = a.at("as_tensor").at("name").get<std::string>();
    sub.output_specs.push_back(std::move(e));
  }
  return sub;
}

// Where a higher-order op takes operands for its body's extra inputs: the input holding
// the list (-1: appended to the node's own inputs, as a region's operands are), and the
// sibling subgraph that takes them too (-1: none).
struct OperandSlot {
  int list = -1;
  int sibling = -1;
};

OperandSlot SlotFor(const Node& node, const ReducibleBody& body) {
  const std::string hop = HigherOrderName(node);
  const std::vector<size_t> graphs = SubgraphArgs(node);
  OperandSlot s;
  if (hop == "cond") {
    s.list = 3;
    s.sibling = static_cast<int>(graphs.at(0) == body.input ? graphs.at(1) : graphs.at(0));
  } else if (hop == "while_loop") {
    s.list = 3;
    s.sibling = static_cast<int>(graphs.at(0));
  } else if (hop == "scan") {
    s.list = 3;
  } else if (hop == "map_impl") {
    s.list = 2;
  } else if (hop != "wrap_with_autocast" && hop != "wrap_with_set_grad_enabled") {
    throw EditRefused("the harness does not edit inside a " + hop);
  }
  return s;
}

std::string Fresh(const std::string& base, std::set<std::string>* taken) {
  std::string name = base;
  for (int k = 1; taken->count(name); ++k) name = base + "_" + std::to_string(k);
  taken->insert(name);
  return name;
}

}  // namespace

std::optional<ReducibleBody> BodyToReduce(const Program& program, size_t hop) {
  const Node& node = program.nodes.at(hop);
  const std::string name = HigherOrderName(node);
  if (name.empty()) return std::nullopt;
  const std::vector<size_t> graphs = SubgraphArgs(node);
  const std::string address = NodePath(node);
  const auto seen = program.observed_control_flow.find(address);
  const bool known = seen != program.observed_control_flow.end();
  ReducibleBody b;
  if (name == "cond") {
    if (!known || seen->second.branch < 0 || graphs.size() != 2) return std::nullopt;
    b.input = graphs.at(seen->second.branch);
  } else if (name == "while_loop") {
    if (!known || seen->second.iterations < 1 || graphs.size() != 2) return std::nullopt;
    b.input = graphs.at(1);
  } else if (name == "scan" || name == "map_impl") {
    if (!known || seen->second.iterations < 1 || graphs.size() != 1) return std::nullopt;
    b.input = graphs.at(0);
  } else if (name == "wrap_with_autocast" || name == "wrap_with_set_grad_enabled") {
    if (graphs.size() != 1) return std::nullopt;
    b.input = graphs.at(0);
  } else {
    return std::nullopt;
  }
  b.graph = ParseSubgraph(node, b.input, "node '" + node.name + "'");
  b.address = address + "/" + b.graph.name;
  return b;
}

std::vector<bool> KeptForTermination(const Program& program, size_t hop, const ReducibleBody& body) {
  std::vector<bool> keep(body.graph.nodes.size(), false);
  const Node& node = program.nodes.at(hop);
  if (HigherOrderName(node) != "while_loop") return keep;
  const Graph cond = ParseSubgraph(node, SubgraphArgs(node).at(0), "node '" + node.name + "'");
  std::set<std::string> read;
  for (const auto& n : cond.nodes) {
    for (const auto& v : NodeInputNames(n)) read.insert(v);
  }
  for (const auto& v : Names(cond.outputs)) read.insert(v);
  // The carried values the condition reads, by position: the body's outputs there.
  const std::vector<std::string> cond_inputs = Names(cond.inputs), outputs = Names(body.graph.outputs);
  std::set<std::string> needed;
  for (size_t k = 0; k < cond_inputs.size() && k < outputs.size(); ++k) {
    if (read.count(cond_inputs[k])) needed.insert(outputs[k]);
  }
  for (size_t i = body.graph.nodes.size(); i-- > 0;) {
    const Node& n = body.graph.nodes[i];
    bool makes = false;
    for (const auto& v : NodeOutputNames(n)) makes = makes || needed.count(v);
    if (!makes) continue;
    keep[i] = true;
    for (const auto& v : NodeInputNames(n)) needed.insert(v);
  }
  return keep;
}

namespace {

// AddInput: a new user input of the program, `meta` its serialized metadata (nothing when it
// is one already).
void AddInput(Program* p, const std::string& name, const json& meta, const std::string& what) {
  for (const auto& s : p->input_specs) {
    if (s.value_name == name) return;
  }
  p->input_specs.push_back(UserInputSpec(name));
  p->document["graph_module"]["graph"]["tensor_values"][name] = meta;
  p->tensor_values[name] = TensorMetaFromJson(name, meta, what);
}

void Reparse(Graph* g, const std::string& what) {
  g->tensor_values.clear();
  const json tv = g->raw.value("tensor_values", json::object());
  for (const auto& [name, meta] : tv.items()) g->tensor_values[name] = TensorMetaFromJson(name, meta, what);
}

// RebuildUntaken: a cond's branch not taken made to return clones of what `branch` (the
// branch taken, as edited) returned in the recorded run, passed in as operands (which
// `branch` takes too, unread). `taken_address`: the branch taken's address.
void RebuildUntaken(Program* p, Node* node, const OperandSlot& slot, Graph* branch, const std::string& taken_address,
                    const std::vector<std::string>& branch_operands) {
  Graph untaken = ParseSubgraph(*node, slot.sibling, "node '" + node->name + "'");
  std::set<std::string> names_untaken, names_taken;
  for (const auto& v : Names(untaken.inputs)) names_untaken.insert(v);
  for (const auto& v : Names(branch->inputs)) names_taken.insert(v);
  for (const auto& [name, meta] : branch->tensor_values) names_taken.insert(name);
  const json taken_tv = branch->raw.at("tensor_values");
  json untaken_tv = json::object();
  for (const auto& v : Names(untaken.inputs)) untaken_tv[v] = untaken.raw.at("tensor_values").at(v);
  const std::vector<std::string> outputs = Names(branch->outputs), formal = Names(branch->inputs);
  untaken.nodes.clear();
  untaken.outputs.clear();
  for (size_t k = 0; k < outputs.size(); ++k) {
    const std::string& o = outputs[k];
    if (!taken_tv.contains(o)) throw EditRefused("no metadata for the branch's output '" + o + "'");
    // The value the branch taken returned: an operand's own where it returned one.
    const size_t at = std::find(formal.begin(), formal.end(), o) - formal.begin();
    const std::string outer = at < branch_operands.size() ? branch_operands[at] : AddressAsName(taken_address + "/" + o);
    const std::string in = Fresh("returned_" + std::to_string(k), &names_untaken);
    const std::string out = Fresh("result_" + std::to_string(k), &names_untaken);
    untaken.inputs.push_back(TensorArg(in));
    untaken_tv[in] = untaken_tv[out] = taken_tv.at(o);
    Node clone;
    clone.name = out;
    clone.target = "torch.ops.aten.clone.default";
    clone.inputs = {{"self", TensorArg(in), 1}};
    clone.outputs = {TensorArg(out)};
    untaken.nodes.push_back(std::move(clone));
    untaken.outputs.push_back(TensorArg(out));
    const std::string unused = Fresh("aoti_unused_returned_" + std::to_string(k), &names_taken);
    branch->inputs.push_back(TensorArg(unused));
    branch->raw["tensor_values"][unused] = taken_tv.at(o);
    node->inputs.at(slot.list).arg["as_tensors"].push_back(json{{"name", outer}});
    AddInput(p, outer, taken_tv.at(o), taken_address);
  }
  untaken.raw["tensor_values"] = untaken_tv;
  Reparse(&untaken, "a branch");
  Reparse(branch, "a branch");
  SetSubgraph(node, slot.sibling, untaken);
}

// TidyOperands: each operand the op passes once (a value two edits both passed in: AOTI
// refuses a subgraph whose inputs alias; the later input's uses read the earlier one), and
// only those a subgraph still reads (an edit leaves the weights of the nodes it cut away).
void TidyOperands(Node* node, const OperandSlot& slot) {
  const std::string hop = HigherOrderName(*node);
  const std::vector<size_t> graphs = SubgraphArgs(*node);
  std::vector<std::string> ops;
  size_t offset = 0;  // where the operands start among a subgraph's inputs
  if (slot.list >= 0) {
    ops = Elements(node->inputs.at(slot.list).arg);
    if (hop == "while_loop") offset = Elements(node->inputs.at(2).arg).size();
    if (hop == "scan") offset = Elements(node->inputs.at(1).arg).size() + Elements(node->inputs.at(2).arg).size();
    if (hop == "map_impl") offset = Elements(node->inputs.at(1).arg).size();
  } else {
    for (size_t i = graphs.back() + 1; i < node->inputs.size(); ++i) ArgumentValueNames(node->inputs[i].arg, &ops);
  }
  std::vector<Graph> takers;
  std::vector<size_t> taker_args;
  for (size_t gi : graphs) {
    Graph g = ParseSubgraph(*node, gi, "node '" + node->name + "'");
    if (Names(g.inputs).size() < offset + ops.size()) continue;
    takers.push_back(std::move(g));
    taker_args.push_back(gi);
  }
  std::map<std::string, size_t> first;
  std::map<size_t, size_t> earlier;  // a later operand -> the same value's first position
  for (size_t i = 0; i < ops.size(); ++i) {
    auto [it, fresh] = first.emplace(ops[i], i);
    if (!fresh) earlier[i] = it->second;
  }
  for (auto& g : takers) {
    const std::vector<std::string> formal = Names(g.inputs);
    std::map<std::string, std::string> rename;
    for (const auto& [later, e] : earlier) rename[formal[offset + later]] = formal[offset + e];
    for (auto& n : g.nodes) {
      for (auto& a : n.inputs) a.arg = RenameValues(a.arg, rename);
    }
    for (auto& o : g.outputs) o = RenameValues(o, rename);
  }
  std::vector<bool> drop(ops.size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {
    bool read = false;
    for (const auto& g : takers) {
      const std::string v = Names(g.inputs)[offset + i];
      for (const auto& n : g.nodes) {
        for (const auto& r : NodeInputNames(n)) read = read || r == v;
      }
      for (const auto& r : Names(g.outputs)) read = read || r == v;
    }
    drop[i] = earlier.count(i) || !read;
  }
  for (size_t t = 0; t < takers.size(); ++t) {
    Graph& g = takers[t];
    const std::vector<std::string> formal = Names(g.inputs);
    for (size_t i = ops.size(); i-- > 0;) {
      if (!drop[i]) continue;
      g.tensor_values.erase(formal[offset + i]);
      g.inputs.erase(g.inputs.begin() + offset + i);
    }
    SetSubgraph(node, taker_args[t], g);
  }
  for (size_t i = ops.size(); i-- > 0;) {
    if (!drop[i]) continue;
    if (slot.list >= 0) {
      json& list = node->inputs.at(slot.list).arg["as_tensors"];
      list.erase(list.begin() + i);
    } else {
      node->inputs.erase(node->inputs.begin() + graphs.back() + 1 + i);
    }
  }
}

bool IsEmptied(const Graph& g) {
  return !g.nodes.empty() && g.nodes.size() == g.outputs.size() &&
         std::all_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.target == "torch.ops.aten.clone.default"; });
}

// ReturnWhatTheBodyReturns: the op's results become what its edited body returns (new
// names, from their addresses), the program's outputs those results; a cond's branch not
// taken returns clones of them as the recorded run made them. EditRefused when another node
// of the program reads the op's old results.
void ReturnWhatTheBodyReturns(Program* p, size_t hop, const OperandSlot& slot, const ReducibleBody& body, Graph* edited) {
  Node& node = p->nodes.at(hop);
  const std::vector<std::string> old = NodeOutputNames(node);
  const std::set<std::string> old_set(old.begin(), old.end());
  for (size_t i = 0; i < p->nodes.size(); ++i) {
    if (i == hop) continue;
    for (const auto& v : NodeInputNames(p->nodes[i])) {
      if (old_set.count(v)) throw EditRefused("node '" + p->nodes[i].name + "' reads the results of '" + node.name + "'");
    }
  }
  for (const auto& s : p->output_specs) {
    if (s.kind != OutputKind::kUserOutput && old_set.count(s.value_name)) {
      throw EditRefused("the results of '" + node.name + "' update the program's state");
    }
  }
  std::set<std::string> names;
  for (const auto& s : p->input_specs) names.insert(s.value_name);
  for (const auto& n : p->nodes) {
    for (const auto& v : NodeOutputNames(n)) names.insert(v);
  }
  node.outputs.clear();
  std::vector<OutputSpecEntry> specs;
  for (const auto& o : Names(edited->outputs)) {
    const std::string result = Fresh(AddressAsName(body.address + "/" + o) + "_result", &names);
    node.outputs.push_back(TensorArg(result));
    const json meta = edited->raw.at("tensor_values").at(o);
    p->document["graph_module"]["graph"]["tensor_values"][result] = meta;
    p->tensor_values[result] = TensorMetaFromJson(result, meta, body.address);
    OutputSpecEntry e;
    e.kind = OutputKind::kUserOutput;
    e.arg = TensorArg(result);
    e.value_name = result;
    specs.push_back(std::move(e));
  }
  // Renamed after its new result; its address (what the recorded run keys it by) stays.
  if (!node.metadata.count(kPathKey)) node.metadata[kPathKey] = NodePath(node);
  node.name = NodeOutputNames(node).front();
  for (const auto& s : p->output_specs) {
    if (!old_set.count(s.value_name)) specs.push_back(s);
  }
  p->output_specs = std::move(specs);
  if (slot.sibling >= 0 && HigherOrderName(node) == "cond") {
    RebuildUntaken(p, &node, slot, edited, body.address, Elements(node.inputs.at(slot.list).arg));
  }
}

}  // namespace

BodyOutputs BodyOutputsOf(const Node& hop) {
  const std::string op = HigherOrderName(hop);
  return op == "cond" || op == "wrap_with_autocast" || op == "wrap_with_set_grad_enabled" ? BodyOutputs::kLast
                                                                                          : BodyOutputs::kPreserve;
}

std::vector<bool> FlowsFrom(const Graph& body, size_t from, const std::vector<bool>& through) {
  std::vector<bool> flows(body.nodes.size(), false);
  flows[from] = true;
  const std::vector<std::string> made = NodeOutputNames(body.nodes[from]);
  std::set<std::string> reached(made.begin(), made.end());
  for (size_t j = from + 1; j < body.nodes.size(); ++j) {
    if (!through.empty() && !through[j]) continue;
    const std::vector<std::string> ins = NodeInputNames(body.nodes[j]);
    if (std::none_of(ins.begin(), ins.end(), [&](const std::string& in) { return reached.count(in) > 0; })) continue;
    flows[j] = true;
    for (const std::string& out : NodeOutputNames(body.nodes[j])) reached.insert(out);
  }
  return flows;
}

Program KeepBodyNodes(const Program& program, size_t hop, const ReducibleBody& body, const std::vector<bool>& keep,
                      BodyOutputs outputs) {
  const Graph& g = body.graph;
  const std::string hop_name = HigherOrderName(program.nodes.at(hop));
  const bool last = outputs == BodyOutputs::kLast;
  if (last && hop_name != "cond" && hop_name != "wrap_with_autocast" && hop_name != "wrap_with_set_grad_enabled") {
    throw EditRefused("a " + hop_name + "'s body returns what the loop carries: its results stay as they are");
  }
  const Program cut = KeepNodes(AsProgram(program, g), keep, last ? OutputMode::kLast : OutputMode::kPreserve);
  if (last && cut.output_specs.empty()) throw EditRefused("the last node kept makes no tensor");
  const std::vector<std::string> inputs = Names(g.inputs);
  const std::set<std::string> original_inputs(inputs.begin(), inputs.end());
  std::set<std::string> made, taken(original_inputs.begin(), original_inputs.end());
  for (const auto& n : cut.nodes) {
    for (const auto& v : NodeOutputNames(n)) made.insert(v), taken.insert(v);
  }
  for (const auto& [name, meta] : g.tensor_values) taken.insert(name);
  // The body cut down: its inputs as they were, then one per cut edge; its outputs as they
  // were (a clone of a new input for each one no kept node makes), or the last kept node's.
  Graph edited = g;
  edited.nodes = cut.nodes;
  json tv = cut.document.at("graph_module").at("graph").value("tensor_values", json::object());
  const json& original_tv = g.raw.at("tensor_values");
  // The body keeps every input it had (the op passes them by position), read or not.
  for (const auto& v : inputs) {
    if (original_tv.contains(v)) tv[v] = original_tv.at(v);
  }
  std::vector<std::pair<std::string, std::string>> extra;  // inner input name, outer value name
  for (const auto& s : cut.input_specs) {
    if (s.kind == InputKind::kUserInput && !original_inputs.count(s.value_name)) {
      extra.emplace_back(s.value_name, AddressAsName(body.address + "/" + s.value_name));
    }
  }
  if (last) {
    edited.outputs.clear();
    for (const auto& o : cut.output_specs) {
      if (o.kind == OutputKind::kUserOutput) edited.outputs.push_back(TensorArg(o.value_name));
    }
  } else {
    for (const auto& o : Names(g.outputs)) {
      if (made.count(o) || original_inputs.count(o)) continue;
      if (!original_tv.contains(o)) throw EditRefused("no metadata for the body's output '" + o + "'");
      const std::string observed = Fresh(o + "_observed", &taken);
      tv[observed] = original_tv.at(o);
      tv[o] = original_tv.at(o);
      extra.emplace_back(observed, AddressAsName(body.address + "/" + o));
      Node clone;
      clone.name = o;
      clone.target = "torch.ops.aten.clone.default";
      clone.inputs = {{"self", TensorArg(observed), 1}};
      clone.outputs = {TensorArg(o)};
      edited.nodes.push_back(std::move(clone));
    }
  }
  for (const auto& [inner, outer] : extra) edited.inputs.push_back(TensorArg(inner));
  edited.raw["tensor_values"] = tv;
  Reparse(&edited, body.address);
  for (const char* t : {"sym_int_values", "sym_bool_values", "sym_float_values"}) {
    const json& graph = cut.document.at("graph_module").at("graph");
    if (graph.contains(t)) edited.raw[t] = graph.at(t);
  }

  Program p = program;
  Node& node = p.nodes.at(hop);
  const OperandSlot slot = SlotFor(node, body);
  std::optional<Graph> sibling;
  if (slot.sibling >= 0) sibling = ParseSubgraph(node, slot.sibling, "node '" + node.name + "'");
  std::set<std::string> sibling_names;
  if (sibling) {
    for (const auto& v : Names(sibling->inputs)) sibling_names.insert(v);
    for (const auto& [name, meta] : sibling->tensor_values) sibling_names.insert(name);
  }
  for (const auto& [inner, outer] : extra) {
    if (slot.list >= 0) {
      node.inputs.at(slot.list).arg["as_tensors"].push_back(json{{"name", outer}});
    } else {
      node.inputs.push_back({"", TensorArg(outer), 1});
    }
    if (sibling) {
      // Taken and not read: the sibling's signature must match.
      const std::string unused = Fresh("aoti_unused_" + inner, &sibling_names);
      sibling->inputs.push_back(TensorArg(unused));
      sibling->raw["tensor_values"][unused] = tv.at(inner);
      sibling->tensor_values[unused] = edited.tensor_values.at(inner);
    }
    AddInput(&p, outer, tv.at(inner), body.address);
  }
  if (sibling) SetSubgraph(&node, slot.sibling, *sibling);
  if (last) ReturnWhatTheBodyReturns(&p, hop, slot, body, &edited);
  SetSubgraph(&p.nodes.at(hop), body.input, edited);
  TidyOperands(&p.nodes.at(hop), slot);
  FinishEdit(&p);
  return RemoveUnusedInputs(p);
}

Program EmptyUntakenBranch(const Program& program, size_t hop, const ReducibleBody& taken) {
  Program p = program;
  Node& node = p.nodes.at(hop);
  if (HigherOrderName(node) != "cond") throw EditRefused("node '" + node.name + "' is no cond");
  const OperandSlot slot = SlotFor(node, taken);
  if (IsEmptied(ParseSubgraph(node, slot.sibling, "node '" + node.name + "'"))) {
    throw EditRefused("the branch not taken is emptied already");
  }
  Graph branch = taken.graph;
  RebuildUntaken(&p, &node, slot, &branch, taken.address, Elements(node.inputs.at(slot.list).arg));
  SetSubgraph(&node, taken.input, branch);
  TidyOperands(&node, slot);
  FinishEdit(&p);
  return RemoveUnusedInputs(p);
}

}  // namespace aoti
