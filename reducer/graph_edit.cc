#include "reducer/graph_edit.h"

#include <functional>
#include <map>

#include "harness/errors.h"
#include "harness/interpreter.h"

namespace aoti {
namespace {

using json = nlohmann::json;

json TensorArg(const std::string& name) { return json{{"as_tensor", {{"name", name}}}}; }

bool IsSymValue(const Program& p, const std::string& name) { return p.tensor_values.count(name) == 0; }

json Leaf() { return json{{"type", nullptr}, {"context", nullptr}, {"children_spec", json::array()}}; }

// The calling convention torch.export records for the root module: (args, kwargs) in and
// the outputs out, as serialized pytree specs. Edits change the number of user inputs
// and outputs, so it is rewritten to match (flat positional inputs, a tuple of outputs or
// a single output).
void RewriteCallSignature(Program* p, size_t user_inputs, size_t user_outputs,
                          const std::vector<std::string>& input_names) {
  json& graph = p->document["graph_module"];
  if (!graph.contains("module_call_graph") || !graph["module_call_graph"].is_array()) return;
  json root;
  for (const auto& entry : graph["module_call_graph"]) {
    if (entry.value("fqn", "") == "") root = entry;
  }
  if (root.is_null()) return;
  json args = json::array();
  for (size_t i = 0; i < user_inputs; ++i) args.push_back(Leaf());
  const json in_spec = json::array(
      {1, {{"type", "builtins.tuple"},
           {"context", "null"},
           {"children_spec",
            json::array({{{"type", "builtins.tuple"}, {"context", "null"}, {"children_spec", args}},
                         {{"type", "builtins.dict"}, {"context", "[]"}, {"children_spec", json::array()}}})}}});
  json out_children = json::array();
  for (size_t i = 0; i < user_outputs; ++i) out_children.push_back(Leaf());
  const json out_spec =
      user_outputs == 1
          ? json::array({1, Leaf()})
          : json::array({1, {{"type", "builtins.tuple"}, {"context", "null"}, {"children_spec", out_children}}});
  json& sig = root["signature"];
  sig["in_spec"] = in_spec.dump();
  sig["out_spec"] = out_spec.dump();
  sig["forward_arg_names"] = input_names;
  graph["module_call_graph"] = json::array({root});
}

// Rebuild graph inputs / outputs from the specs, and keep only the metadata still used.
void Finish(Program* p) {
  // Constant inputs are not graph inputs in the serialized program.
  p->graph_inputs.clear();
  for (const auto& s : p->input_specs) {
    if (s.kind == InputKind::kConstantInput) continue;
    p->graph_inputs.push_back(s.kind == InputKind::kUserInput ? s.arg : TensorArg(s.value_name));
  }
  p->graph_outputs.clear();
  size_t user_outputs = 0;
  for (const auto& s : p->output_specs) {
    p->graph_outputs.push_back(s.kind == OutputKind::kUserOutput ? s.arg : TensorArg(s.value_name));
    if (s.kind == OutputKind::kUserOutput) ++user_outputs;
  }
  const std::vector<std::string> inputs = UserInputNames(*p);
  RewriteCallSignature(p, inputs.size(), user_outputs, inputs);
  std::set<std::string> used;
  for (const auto& n : p->nodes) {
    for (const auto& v : NodeInputNames(n)) used.insert(v);
    for (const auto& v : NodeOutputNames(n)) used.insert(v);
  }
  for (const auto& s : p->input_specs) used.insert(s.value_name);
  for (auto it = p->tensor_values.begin(); it != p->tensor_values.end();) {
    it = used.count(it->first) ? std::next(it) : p->tensor_values.erase(it);
  }
  // Keep the document's tensor_values in step (ToJson writes the document's graph fields).
  json& tv = p->document["graph_module"]["graph"]["tensor_values"];
  for (auto it = tv.begin(); it != tv.end();) {
    if (used.count(it.key())) ++it;
    else it = tv.erase(it);
  }
}

}  // namespace

std::vector<std::string> UserInputNames(const Program& program) {
  std::vector<std::string> names;
  for (const auto& s : program.input_specs) {
    if (s.kind == InputKind::kUserInput && !s.value_name.empty()) names.push_back(s.value_name);
  }
  return names;
}

std::string ShortTarget(const std::string& target) {
  return target.rfind("torch.ops.", 0) == 0 ? target.substr(10) : target;
}

std::vector<std::string> OperatorNames(const Program& program) {
  std::vector<std::string> names;
  for (const auto& n : program.nodes) names.push_back(ShortTarget(n.target));
  return names;
}

Program KeepNodes(const Program& program, const std::vector<bool>& keep, OutputMode mode) {
  Program p = program;
  p.nodes.clear();
  std::set<std::string> made;   // values kept nodes make
  std::set<std::string> read_by_kept;
  std::vector<std::string> read_order;
  for (size_t i = 0; i < program.nodes.size(); ++i) {
    if (!keep[i]) continue;
    const Node& n = program.nodes[i];
    for (const auto& v : NodeInputNames(n)) {
      if (!made.count(v) && read_by_kept.insert(v).second) read_order.push_back(v);
    }
    for (const auto& v : NodeOutputNames(n)) made.insert(v);
    p.nodes.push_back(n);
  }
  // Inputs: existing specs that kept nodes (or kept outputs) read, then the cut edges.
  std::set<std::string> existing;
  for (const auto& s : program.input_specs) existing.insert(s.value_name);
  std::set<std::string> current_outputs;
  for (const auto& s : program.output_specs) {
    if (s.kind == OutputKind::kUserOutput && !s.value_name.empty()) current_outputs.insert(s.value_name);
  }
  // Outputs.
  p.output_specs.clear();
  std::set<std::string> out_names;
  auto add_output = [&](const std::string& v) {
    if (!out_names.insert(v).second) return;
    OutputSpecEntry e;
    e.kind = OutputKind::kUserOutput;
    e.arg = TensorArg(v);
    e.value_name = v;
    p.output_specs.push_back(std::move(e));
  };
  if (mode == OutputMode::kPreserve) {
    for (const auto& s : program.output_specs) {
      if (s.kind == OutputKind::kUserOutput && made.count(s.value_name)) add_output(s.value_name);
    }
  } else if (mode == OutputMode::kLast) {
    if (!p.nodes.empty()) {
      for (const auto& v : NodeOutputNames(p.nodes.back())) {
        if (!IsSymValue(program, v)) add_output(v);
      }
    }
  } else {
    std::set<std::string> read_by_removed;
    for (size_t i = 0; i < program.nodes.size(); ++i) {
      if (keep[i]) continue;
      for (const auto& v : NodeInputNames(program.nodes[i])) read_by_removed.insert(v);
    }
    for (const auto& n : p.nodes) {
      for (const auto& v : NodeOutputNames(n)) {
        if ((read_by_removed.count(v) || current_outputs.count(v)) && !IsSymValue(program, v)) add_output(v);
      }
    }
  }
  // Buffer mutations whose new value is still made stay.
  for (const auto& s : program.output_specs) {
    if (s.kind != OutputKind::kUserOutput && made.count(s.value_name)) p.output_specs.push_back(s);
  }
  p.input_specs.clear();
  for (const auto& s : program.input_specs) {
    if (read_by_kept.count(s.value_name) || out_names.count(s.value_name)) p.input_specs.push_back(s);
  }
  std::vector<InputSpecEntry> cut;
  for (const auto& v : read_order) {
    if (existing.count(v)) continue;
    if (IsSymValue(program, v)) {
      throw EditRefused("cutting at '" + v + "' would make a symbolic value an input, which is not supported");
    }
    InputSpecEntry e;
    e.kind = InputKind::kUserInput;
    e.value_name = v;
    e.arg = TensorArg(v);
    e.raw = json{{"arg", e.arg}};
    cut.push_back(std::move(e));
  }
  // User inputs first (existing order, then cut edges), then the lifted state, as export lays them out.
  std::vector<InputSpecEntry> ordered;
  for (const auto& s : p.input_specs) if (s.kind != InputKind::kUserInput) ordered.push_back(s);
  for (const auto& s : p.input_specs) if (s.kind == InputKind::kUserInput) ordered.push_back(s);
  for (auto& s : cut) ordered.push_back(std::move(s));
  p.input_specs = std::move(ordered);
  Finish(&p);
  return mode == OutputMode::kFrontier ? RemoveUnusedInputs(p) : RemoveUnusedInputs(EliminateDeadCode(p));
}

Program DropOutputs(const Program& program, const std::set<std::string>& outputs) {
  Program p = program;
  p.output_specs.clear();
  for (const auto& s : program.output_specs) {
    if (!(s.kind == OutputKind::kUserOutput && outputs.count(s.value_name))) p.output_specs.push_back(s);
  }
  Finish(&p);
  return RemoveUnusedInputs(EliminateDeadCode(p));
}

Program EliminateDeadCode(const Program& program) {
  Program p = program;
  std::set<std::string> live;
  for (const auto& s : p.output_specs) {
    std::vector<std::string> names;
    ArgumentValueNames(s.arg, &names);
    for (const auto& n : names) live.insert(n);
    if (!s.value_name.empty()) live.insert(s.value_name);
  }
  // Values that may share memory (a view and its base, an in-place result and its self),
  // as classes of one representative each.
  std::map<std::string, std::string> parent;
  std::function<std::string(const std::string&)> find = [&](const std::string& v) -> std::string {
    auto it = parent.find(v);
    if (it == parent.end() || it->second == v) return v;
    return it->second = find(it->second);
  };
  for (const auto& n : p.nodes) {
    for (const auto& base : AliasedValueNames(n)) {
      for (const auto& out : NodeOutputNames(n)) parent[find(out)] = find(base);
    }
  }
  std::set<std::string> live_classes;
  for (const auto& v : live) live_classes.insert(find(v));
  // A write to a program input (a buffer, or memory tied to one, a user input) outlives the
  // call: always kept.
  for (const auto& s : p.input_specs) {
    if (!s.value_name.empty()) live_classes.insert(find(s.value_name));
  }
  std::vector<bool> keep(p.nodes.size(), false);
  for (size_t i = p.nodes.size(); i-- > 0;) {
    bool needed = false;
    for (const auto& v : NodeOutputNames(p.nodes[i])) needed = needed || live.count(v);
    // An in-place node changes memory: needed when anything sharing that memory is read
    // later or returned (clamp_ on a slice of a returned value, copy_ into a view).
    for (const auto& v : MutatedValueNames(p.nodes[i])) needed = needed || live_classes.count(find(v));
    if (!needed) continue;
    keep[i] = true;
    for (const auto& v : NodeInputNames(p.nodes[i])) {
      live.insert(v);
      live_classes.insert(find(v));
    }
  }
  std::vector<Node> nodes;
  for (size_t i = 0; i < p.nodes.size(); ++i) if (keep[i]) nodes.push_back(p.nodes[i]);
  p.nodes = std::move(nodes);
  Finish(&p);
  return p;
}

Program RemoveUnusedInputs(const Program& program) {
  Program p = program;
  std::set<std::string> used;
  for (const auto& n : p.nodes) for (const auto& v : NodeInputNames(n)) used.insert(v);
  for (const auto& s : p.output_specs) used.insert(s.value_name);
  std::vector<InputSpecEntry> specs;
  for (const auto& s : p.input_specs) {
    if (used.count(s.value_name) || s.kind == InputKind::kToken) specs.push_back(s);
  }
  p.input_specs = std::move(specs);
  Finish(&p);
  return p;
}

Program ExposeIntermediates(const Program& p) {
  Program out = p;
  std::set<std::string> have;
  for (const auto& s : out.output_specs) have.insert(s.value_name);
  for (const auto& n : p.nodes) {
    for (const auto& v : NodeOutputNames(n)) {
      auto meta = p.tensor_values.find(v);
      if (meta == p.tensor_values.end() || !c10::isFloatingType(meta->second.dtype) || have.count(v)) continue;
      OutputSpecEntry e;
      e.kind = OutputKind::kUserOutput;
      e.arg = nlohmann::json{{"as_tensor", {{"name", v}}}};
      e.value_name = v;
      out.output_specs.push_back(std::move(e));
      have.insert(v);
    }
  }
  return RemoveUnusedInputs(EliminateDeadCode(out));
}

std::map<std::string, at::Tensor> UserOutputsByName(const Program& program,
                                                    const std::vector<at::Tensor>& user_outputs) {
  std::map<std::string, at::Tensor> out;
  size_t next = 0;
  for (const auto& spec : program.output_specs) {
    if (spec.kind != OutputKind::kUserOutput) continue;
    if (next >= user_outputs.size()) break;
    const at::Tensor& t = user_outputs[next++];
    if (!spec.value_name.empty()) out[spec.value_name] = t;
  }
  return out;
}

}  // namespace aoti
