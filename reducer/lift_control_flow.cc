#include "reducer/lift_control_flow.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "harness/util/errors.h"
#include "reducer/graph_edit.h"

namespace aoti {
namespace {

using json = nlohmann::json;
using Renames = std::map<std::string, std::string>;

// Elements: the Argument unions of a list argument (as_tensors, as_sym_ints, ...) one by
// one; a single argument as itself.
std::vector<json> Elements(const json& arg) {
  if (!arg.is_object() || arg.size() != 1) return {arg};
  const std::string key = arg.begin().key();
  const json& v = arg.begin().value();
  std::vector<json> out;
  if (key == "as_tensors") {
    for (const auto& e : v) out.push_back(json{{"as_tensor", e}});
  } else if (key == "as_sym_ints" || key == "as_sym_floats" || key == "as_sym_bools") {
    const std::string one = key.substr(0, key.size() - 1);
    for (const auto& e : v) out.push_back(json{{one, e}});
  } else {
    out.push_back(arg);
  }
  return out;
}

std::string Join(const std::string& scope, const std::string& name) { return scope.empty() ? name : scope + "/" + name; }

std::string Identifier(const std::string& address) { return AddressAsName(address); }

// The serialized metadata tables of one graph (the program's, or a subgraph's).
struct GraphMeta {
  const std::map<std::string, TensorMeta>* tensor_values = nullptr;
  json tables = json::object();  // tensor_values, sym_int_values, sym_bool_values, sym_float_values
};

constexpr const char* kTables[] = {"tensor_values", "sym_int_values", "sym_bool_values", "sym_float_values"};

GraphMeta MetaOf(const Graph& g) {
  GraphMeta m;
  m.tensor_values = &g.tensor_values;
  for (const char* t : kTables) m.tables[t] = g.raw.value(t, json::object());
  return m;
}

class Lifter {
 public:
  Lifter(Program* out, const std::map<std::string, ControlFlowTaken>& taken, LiftedProgram* result)
      : out_(out), taken_(taken), result_(result) {
    const json& graph = out_->document.at("graph_module").at("graph");
    for (const char* t : kTables) {
      const json table = graph.value(t, json::object());
      for (const auto& [name, v] : table.items()) names_.insert(name);
    }
    for (const auto& s : out_->input_specs) names_.insert(s.value_name);
    ForEachNode(out_->nodes, [&](const Node& n, const std::string&) {
      for (const auto& v : NodeOutputNames(n)) names_.insert(v);
      for (size_t i : SubgraphArgs(n)) names_.insert(n.inputs[i].arg.at("as_graph").value("name", ""));
    });
  }

  // Lift: `nodes` of the graph at `scope` ("" for the program's own) into `sink`, their
  // control flow lifted. `rename` maps the graph's value names to the lifted program's; a
  // value a node of a subgraph makes gets a fresh name (and its metadata) there.
  void Lift(const std::vector<Node>& nodes, const std::string& scope, Renames& rename, const GraphMeta& meta,
            std::vector<Node>* sink) {
    for (const Node& node : nodes) {
      if (!HigherOrderName(node).empty() && LiftHigherOrder(node, scope, rename, meta, sink)) continue;
      Node copy = node;
      for (auto& a : copy.inputs) {
        if (!(a.arg.is_object() && a.arg.contains("as_graph"))) {
          a.arg = RenameValues(a.arg, rename);
        } else if (!scope.empty()) {
          // A higher-order op kept inside a lifted region: its subgraphs' names must not
          // collide with those of the graph it now sits in.
          a.arg["as_graph"]["name"] = Fresh(Identifier(Join(scope, a.arg["as_graph"].value("name", "graph"))));
        }
      }
      if (!scope.empty()) {
        for (const auto& v : NodeOutputNames(node)) rename[v] = Define(v, scope, meta);
        for (auto& o : copy.outputs) o = RenameValues(o, rename);
        if (!copy.metadata.count(kPathKey)) copy.metadata[kPathKey] = Join(scope, node.name);
        const std::vector<std::string> outs = NodeOutputNames(copy);
        copy.name = outs.empty() ? Identifier(Join(scope, node.name)) : outs.front();
      }
      sink->push_back(std::move(copy));
    }
  }

 private:
  // Define: the lifted program's name for value `name` of the graph at `scope`: itself at
  // the top; else a fresh name, whose metadata is copied from the graph's tables.
  std::string Define(const std::string& name, const std::string& scope, const GraphMeta& meta) {
    if (scope.empty()) return name;
    const std::string fresh = Fresh(Identifier(Join(scope, name)));
    json& graph = out_->document["graph_module"]["graph"];
    for (const char* t : kTables) {
      if (meta.tables.contains(t) && meta.tables.at(t).contains(name)) graph[t][fresh] = meta.tables.at(t).at(name);
    }
    if (meta.tensor_values) {
      auto it = meta.tensor_values->find(name);
      if (it != meta.tensor_values->end()) out_->tensor_values[fresh] = it->second;
    }
    return fresh;
  }

  std::string Fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; names_.count(name); ++k) name = base + "_" + std::to_string(k);
    names_.insert(name);
    return name;
  }

  // MetaJson: the serialized metadata of a value of the lifted program.
  json MetaJson(const std::string& name) const {
    return out_->document.at("graph_module").at("graph").at("tensor_values").value(name, json());
  }

  void AddValue(const std::string& name, const json& meta_json) {
    out_->document["graph_module"]["graph"]["tensor_values"][name] = meta_json;
    out_->tensor_values[name] = TensorMetaFromJson(name, meta_json, "a lifted value");
  }

  Node NewNode(const std::string& target, std::vector<NamedArgument> inputs, const json& output,
               const std::string& path) {
    Node n;
    n.target = target;
    n.inputs = std::move(inputs);
    n.outputs = {output};
    std::vector<std::string> outs;
    ArgumentValueNames(output, &outs);
    n.name = outs.empty() ? Identifier(path) : outs.front();
    n.metadata[kPathKey] = path;
    return n;
  }

  // Inline: subgraph `g` run once on `args`, its nodes lifted in its own scope; returns the
  // lifted names of its outputs. False (nothing added) when an argument is a literal where
  // the subgraph reads a value by name.
  bool Inline(const Graph& g, const std::vector<json>& args, const std::string& scope, std::vector<Node>* sink,
              std::vector<std::string>* outputs) {
    if (args.size() != g.inputs.size()) return false;
    Renames inner;
    for (size_t k = 0; k < args.size(); ++k) {
      std::vector<std::string> formal, actual;
      ArgumentValueNames(g.inputs[k], &formal);
      ArgumentValueNames(args[k], &actual);
      if (formal.size() != actual.size()) return false;
      for (size_t i = 0; i < formal.size(); ++i) inner[formal[i]] = actual[i];
    }
    Lift(g.nodes, scope, inner, MetaOf(g), sink);
    for (const auto& o : g.outputs) {
      std::vector<std::string> names;
      ArgumentValueNames(o, &names);
      if (names.size() != 1) return false;
      auto it = inner.find(names[0]);
      outputs->push_back(it == inner.end() ? names[0] : it->second);
    }
    return true;
  }

  // Outputs of the node as single value names, in order.
  static std::vector<std::string> OutputNames(const Node& node) { return NodeOutputNames(node); }

  // FirstSlice: xs[0] for each of the xs, as select nodes; their values take the subgraph's
  // input metadata (a slice's).
  std::vector<json> FirstSlices(const std::vector<json>& xs, const Graph& g, size_t first_input, const std::string& path,
                                std::vector<Node>* sink) {
    std::vector<json> slices;
    for (size_t j = 0; j < xs.size(); ++j) {
      std::vector<std::string> formal, x;
      ArgumentValueNames(g.inputs.at(first_input + j), &formal);
      ArgumentValueNames(xs[j], &x);
      if (formal.size() != 1 || x.size() != 1) throw EditRefused(path + ": a mapped input is not one tensor");
      const std::string name = Fresh(Identifier(path + "/first_slice_" + formal[0]));
      AddValue(name, g.raw.at("tensor_values").at(formal[0]));
      sink->push_back(NewNode("torch.ops.aten.select.int",
                              {{"self", TensorArg(x[0]), 1}, {"dim", json{{"as_int", 0}}, 1},
                               {"index", json{{"as_int", 0}}, 1}},
                              TensorArg(name), path + "/first_slice_" + formal[0]));
      slices.push_back(TensorArg(name));
    }
    return slices;
  }

  // Stack: a per-step value `step_value` standing for the loop's stacked output `stacked`
  // (of the graph at `scope`): expanded along a new first dimension of the loop's length,
  // then made contiguous; returns the lifted name of the result.
  std::string Stack(const std::string& step_value, const std::string& stacked, const std::string& scope,
                    const GraphMeta& meta, const std::string& path, std::vector<Node>* sink) {
    const json stacked_meta = meta.tables.at("tensor_values").value(stacked, json());
    if (!stacked_meta.is_object() || stacked_meta.value("sizes", json::array()).empty()) {
      throw EditRefused(path + ": no metadata for its stacked output '" + stacked + "'");
    }
    const json length = stacked_meta.at("sizes").at(0);
    json size_arg;
    if (length.contains("as_int")) {
      size_arg = json{{"as_int", length.at("as_int")}};
    } else {
      throw EditRefused(path + ": its length is symbolic");
    }
    json step_meta = MetaJson(step_value);
    if (!step_meta.is_object()) throw EditRefused(path + ": no metadata for '" + step_value + "'");
    json expanded_meta = step_meta;
    expanded_meta["sizes"] = json::array({length});
    expanded_meta["strides"] = json::array({json{{"as_int", 0}}});
    json sizes = json::array({size_arg});
    for (const auto& d : step_meta.at("sizes")) {
      expanded_meta["sizes"].push_back(d);
      sizes.push_back(json{{"as_int", -1}});
    }
    for (const auto& d : step_meta.value("strides", json::array())) expanded_meta["strides"].push_back(d);
    const std::string expanded = Fresh(Identifier(path + "/expanded_" + stacked));
    AddValue(expanded, expanded_meta);
    sink->push_back(NewNode("torch.ops.aten.expand.default",
                            {{"self", TensorArg(step_value), 1}, {"size", json{{"as_sym_ints", sizes}}, 1}},
                            TensorArg(expanded), path + "/expanded_" + stacked));
    const std::string out = Define(stacked, scope, meta);
    sink->push_back(NewNode("torch.ops.aten.clone.default",
                            {{"self", TensorArg(expanded), 1}, {"memory_format", json{{"as_memory_format", 1}}, 2}},
                            TensorArg(out), path + "/stacked_" + stacked));
    return out;
  }

  // Distribute: an autocast region's lifted nodes, each in a region of its own with the
  // region's settings (the wrapper's first four arguments).
  void Distribute(const Node& wrapper, const std::vector<Node>& region, const std::string& path,
                  std::vector<Node>* sink) {
    const json& graph = out_->document.at("graph_module").at("graph");
    for (const Node& n : region) {
      std::vector<std::string> outs = NodeOutputNames(n);
      if (outs.empty()) {
        sink->push_back(n);  // an assert: nothing computed
        continue;
      }
      Graph body;
      body.name = Fresh(Identifier(n.name) + "_region");
      std::vector<std::string> reads;
      for (const auto& v : NodeInputNames(n)) {
        if (std::find(reads.begin(), reads.end(), v) == reads.end()) reads.push_back(v);
      }
      json tables = json::object();
      for (const char* t : kTables) tables[t] = json::object();
      Node w;
      w.target = wrapper.target;
      for (size_t k = 0; k < 4 && k < wrapper.inputs.size(); ++k) w.inputs.push_back(wrapper.inputs[k]);
      w.inputs.push_back({"", json(), 1});  // the subgraph, below
      const auto arg_of = [&](const std::string& v) {
        if (graph.at("tensor_values").contains(v)) return TensorArg(v);
        return json{{"as_sym_int", {{"as_name", v}}}};
      };
      for (const auto& v : reads) {
        body.inputs.push_back(arg_of(v));
        w.inputs.push_back({"", arg_of(v), 1});
      }
      for (const auto& v : reads) {
        for (const char* t : kTables) {
          if (graph.value(t, json::object()).contains(v)) tables[t][v] = graph.at(t).at(v);
        }
      }
      for (const auto& v : outs) {
        body.outputs.push_back(arg_of(v));
        for (const char* t : kTables) {
          if (graph.value(t, json::object()).contains(v)) tables[t][v] = graph.at(t).at(v);
        }
        w.outputs.push_back(arg_of(v));
      }
      body.nodes = {n};
      body.raw = tables;
      body.raw["is_single_tensor_return"] = false;
      for (const auto& [name, meta] : tables.at("tensor_values").items()) body.tensor_values[name] = out_->tensor_values.at(name);
      SetSubgraphOf(&w, 4, body);
      w.name = n.name;
      w.metadata = n.metadata;
      sink->push_back(std::move(w));
    }
  }

  // SetSubgraphOf: SetSubgraph on an input that holds no subgraph yet.
  static void SetSubgraphOf(Node* node, size_t index, const Graph& g) {
    node->inputs[index].arg = json{{"as_graph", {{"name", g.name}, {"graph", json::object()}}}};
    SetSubgraph(node, index, g);
  }

  // LiftHigherOrder: false when the op stays as it is (it did not run, or cannot be lifted).
  bool LiftHigherOrder(const Node& node, const std::string& scope, Renames& rename, const GraphMeta& meta,
                       std::vector<Node>* sink) {
    const std::string hop = HigherOrderName(node);
    const std::string path = Join(scope, node.name);
    const auto seen = taken_.find(path);
    const std::vector<size_t> graphs = SubgraphArgs(node);
    const auto arg = [&](size_t i) { return RenameValues(node.inputs.at(i).arg, rename); };
    const auto keep = [&](const std::string& why) {
      result_->kept.push_back(hop + " '" + path + "': " + why);
      return false;
    };
    std::vector<Node> lifted;
    std::vector<std::string> results;
    std::string what;
    try {
      if (hop == "cond") {
        if (seen == taken_.end() || seen->second.branch < 0) return keep("it did not run");
        const Graph g = ParseSubgraph(node, graphs.at(seen->second.branch), path);
        if (!Inline(g, Elements(arg(3)), path + "/" + g.name, &lifted, &results)) return keep("its operands do not match");
        what = "its " + g.name + " (taken)";
      } else if (hop == "while_loop") {
        if (seen == taken_.end() || seen->second.iterations < 1) return keep("it ran no iteration");
        const Graph g = ParseSubgraph(node, graphs.at(1), path);
        std::vector<json> args = Elements(arg(2));
        for (const auto& e : Elements(arg(3))) args.push_back(e);
        if (!Inline(g, args, path + "/" + g.name, &lifted, &results)) return keep("its operands do not match");
        what = "its body's first of " + std::to_string(seen->second.iterations) + " iterations";
      } else if (hop == "wrap_with_set_grad_enabled") {
        const Graph g = ParseSubgraph(node, graphs.at(0), path);
        std::vector<json> args;
        for (size_t i = graphs.at(0) + 1; i < node.inputs.size(); ++i) args.push_back(arg(i));
        if (!Inline(g, args, path + "/" + g.name, &lifted, &results)) return keep("its operands do not match");
        what = "its region";
      } else if (hop == "wrap_with_autocast") {
        const Graph g = ParseSubgraph(node, graphs.at(0), path);
        std::vector<json> args;
        for (size_t i = graphs.at(0) + 1; i < node.inputs.size(); ++i) args.push_back(arg(i));
        std::vector<Node> region;
        if (!Inline(g, args, path + "/" + g.name, &region, &results)) return keep("its operands do not match");
        Distribute(node, region, path, &lifted);
        what = "its region, one autocast region per op";
      } else if (hop == "scan" || hop == "map_impl") {
        if (seen == taken_.end() || seen->second.iterations < 1) return keep("it ran no iteration");
        const Graph g = ParseSubgraph(node, graphs.at(0), path);
        const bool scan = hop == "scan";
        const std::vector<json> carry = scan ? Elements(arg(1)) : std::vector<json>{};
        std::vector<json> args = carry;
        const std::vector<json> slices = FirstSlices(Elements(arg(scan ? 2 : 1)), g, carry.size(), path, &lifted);
        args.insert(args.end(), slices.begin(), slices.end());
        for (const auto& e : Elements(arg(scan ? 3 : 2))) args.push_back(e);
        std::vector<std::string> step;
        if (!Inline(g, args, path + "/" + g.name, &lifted, &step)) return keep("its operands do not match");
        const std::vector<std::string> outs = OutputNames(node);
        if (outs.size() != step.size()) return keep("its outputs do not match its subgraph's");
        for (size_t k = 0; k < outs.size(); ++k) {
          if (k < carry.size()) {
            results.push_back(step[k]);
          } else {
            results.push_back(Stack(step[k], outs[k], scope, meta, path, &lifted));
          }
        }
        what = "its first step of " + std::to_string(seen->second.iterations) + ", stacked to the loop's length";
      } else {
        return keep("the harness lifts cond, while_loop, scan, map_impl and the autocast and grad-mode regions");
      }
    } catch (const EditRefused& e) {
      return keep(e.what());
    }
    const std::vector<std::string> outs = OutputNames(node);
    if (outs.size() != results.size()) return keep("its outputs do not match its subgraph's");
    for (size_t k = 0; k < outs.size(); ++k) rename[outs[k]] = results[k];
    sink->insert(sink->end(), lifted.begin(), lifted.end());
    result_->lifted.push_back(hop + " '" + path + "': " + what);
    return true;
  }

  Program* out_;
  const std::map<std::string, ControlFlowTaken>& taken_;
  LiftedProgram* result_;
  std::set<std::string> names_;
};

}  // namespace

bool HasControlFlow(const Program& program) {
  for (const auto& n : program.nodes) {
    if (!HigherOrderName(n).empty()) return true;
  }
  return false;
}

LiftedProgram LiftControlFlow(const Program& program, const std::map<std::string, ControlFlowTaken>& taken) {
  LiftedProgram result;
  result.program = program;
  Program& out = result.program;
  out.nodes.clear();
  Lifter lifter(&out, taken, &result);
  Renames rename;
  GraphMeta top;
  top.tensor_values = &program.tensor_values;
  const json& graph = program.document.at("graph_module").at("graph");
  for (const char* t : kTables) top.tables[t] = graph.value(t, json::object());
  std::vector<Node> nodes;
  lifter.Lift(program.nodes, "", rename, top, &nodes);
  out.nodes = std::move(nodes);
  for (auto& s : out.output_specs) {
    s.arg = RenameValues(s.arg, rename);
    auto it = rename.find(s.value_name);
    if (it != rename.end()) s.value_name = it->second;
  }
  FinishEdit(&out);
  return result;
}

}  // namespace aoti
