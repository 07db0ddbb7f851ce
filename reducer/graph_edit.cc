#include "reducer/graph_edit.h"

#include <functional>
#include <map>

#include "harness/util/errors.h"
#include "harness/program/interpreter.h"
#include "harness/program/sym_expr.h"

namespace aoti {
namespace {

using json = nlohmann::json;

bool IsSymValue(const Program& p, const std::string& name) { return p.tensor_values.count(name) == 0; }

// SpecialiseSymInts: symbolic ints named in `values` become those literal ints in an
// Argument union (a single SymInt, or one in a list).
void SpecialiseSymInts(json* arg, const std::map<std::string, int64_t>& values) {
  if (values.empty() || !arg->is_object() || arg->size() != 1) return;
  const std::string key = arg->begin().key();
  json& body = arg->begin().value();
  auto literal = [&](const json& e, int64_t* out) {
    if (!e.is_object() || !e.contains("as_name") || !e.at("as_name").is_string()) return false;
    auto it = values.find(e.at("as_name").get<std::string>());
    if (it == values.end()) return false;
    *out = it->second;
    return true;
  };
  int64_t v = 0;
  if (key == "as_sym_int" && literal(body, &v)) {
    *arg = json{{"as_int", v}};
  } else if (key == "as_sym_ints" && body.is_array()) {
    for (auto& e : body) {
      if (literal(e, &v)) e = json{{"as_int", v}};
    }
  }
}

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

}  // namespace

// Rebuild graph inputs / outputs from the specs, and keep only the metadata still used.
void FinishEdit(Program* p) {
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

json TensorArg(const std::string& name) { return json{{"as_tensor", {{"name", name}}}}; }

InputSpecEntry UserInputSpec(const std::string& name) {
  InputSpecEntry e;
  e.kind = InputKind::kUserInput;
  e.value_name = name;
  e.arg = TensorArg(name);
  e.raw = json{{"arg", e.arg}};
  return e;
}

AliasClasses::AliasClasses(const Program& program) {
  for (const auto& n : program.nodes) {
    for (const auto& base : AliasedValueNames(n)) {
      for (const auto& out : NodeOutputNames(n)) parent_[Of(out)] = Of(base);
    }
  }
}

std::string AliasClasses::Of(const std::string& v) {
  auto it = parent_.find(v);
  if (it == parent_.end() || it->second == v) return v;
  return it->second = Of(it->second);
}

json RenameValues(const json& arg, const std::map<std::string, std::string>& rename) {
  if (!arg.is_object() || arg.size() != 1 || rename.empty()) return arg;
  const auto renamed = [&](const std::string& name) {
    auto it = rename.find(name);
    return it == rename.end() ? name : it->second;
  };
  json out = arg;
  const std::string key = arg.begin().key();
  json& v = out.begin().value();
  const auto named = [&](json& e, const char* field) {
    if (e.is_object() && e.contains(field) && e.at(field).is_string()) e[field] = renamed(e.at(field).get<std::string>());
  };
  if (key == "as_tensor") {
    named(v, "name");
  } else if (key == "as_tensors") {
    for (auto& e : v) named(e, "name");
  } else if (key == "as_optional_tensor") {
    if (v.contains("as_tensor")) named(v["as_tensor"], "name");
  } else if (key == "as_optional_tensors") {
    for (auto& e : v) {
      if (e.contains("as_tensor")) named(e["as_tensor"], "name");
    }
  } else if (key == "as_sym_int" || key == "as_sym_float" || key == "as_sym_bool") {
    named(v, "as_name");
  } else if (key == "as_sym_ints" || key == "as_sym_floats" || key == "as_sym_bools") {
    for (auto& e : v) named(e, "as_name");
  }
  return out;
}

std::vector<std::string> UserInputNames(const Program& program) {
  std::vector<std::string> names;
  for (const auto& s : program.input_specs) {
    if (s.kind == InputKind::kUserInput && !s.value_name.empty()) names.push_back(s.value_name);
  }
  return names;
}

std::vector<std::string> DynamicShapeNotes(const Program& original, const Program& reduced) {
  std::vector<std::string> notes;
  for (const auto& name : UserInputNames(reduced)) {
    auto it = reduced.tensor_values.find(name);
    if (it == reduced.tensor_values.end()) continue;
    for (size_t d = 0; d < it->second.sizes.size(); ++d) {
      if (!it->second.sizes[d].is_symbolic()) continue;
      const std::string& sym = it->second.sizes[d].sym;  // "s77", as DimFromJson names it
      std::string range;
      auto r = reduced.range_constraints.find(sym);
      if (r != reduced.range_constraints.end()) {
        range = " in [" + std::to_string(r->second.min) + ", " +
                (r->second.max == INT64_MAX ? std::string("inf") : std::to_string(r->second.max)) + "]";
      }
      notes.push_back("kept dynamic: input '" + name + "' dimension " + std::to_string(d) + " is " + sym + range);
    }
  }
  std::map<std::string, const Node*> by_name;
  for (const auto& n : original.nodes) by_name[n.name] = &n;
  for (const auto& n : reduced.nodes) {
    auto it = by_name.find(n.name);
    if (it == by_name.end() || it->second->inputs.size() != n.inputs.size()) continue;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const json& before = it->second->inputs[i].arg;
      const json& after = n.inputs[i].arg;
      auto note = [&](const json& was, const json& now) {
        if (was.is_object() && was.contains("as_name") && was["as_name"].is_string() && now.is_object() &&
            now.contains("as_int")) {
          notes.push_back("specialised: '" + was["as_name"].get<std::string>() + "' is " + now["as_int"].dump() +
                          " (the value export observed) in node '" + n.name + "'");
        }
      };
      if (before.contains("as_sym_int") && after.contains("as_int")) note(before["as_sym_int"], after);
      if (before.contains("as_sym_ints") && after.contains("as_sym_ints") && before["as_sym_ints"].is_array() &&
          after["as_sym_ints"].is_array() && before["as_sym_ints"].size() == after["as_sym_ints"].size()) {
        for (size_t k = 0; k < before["as_sym_ints"].size(); ++k) note(before["as_sym_ints"][k], after["as_sym_ints"][k]);
      }
    }
  }
  return notes;
}

std::string ShortTarget(const std::string& target) {
  return target.rfind("torch.ops.", 0) == 0 ? target.substr(10) : target;
}

std::vector<std::string> OperatorNames(const Program& program) {
  std::vector<std::string> names;
  ForEachNode(program.nodes, [&](const Node& n, const std::string&) { names.push_back(ShortTarget(n.target)); });
  return names;
}

std::string OperatorOf(const Node& node) {
  if (HigherOrderName(node).empty()) return ShortTarget(node.target);
  // A higher-order op around one op (clones of recorded values aside): that op.
  std::set<std::string> ops;
  for (size_t i : SubgraphArgs(node)) {
    for (const auto& n : ParseSubgraph(node, i, "node '" + node.name + "'").nodes) {
      if (n.target != "torch.ops.aten.clone.default") ops.insert(OperatorOf(n));
    }
  }
  return ops.size() == 1 ? *ops.begin() : ShortTarget(node.target);
}

std::string CulpritOperator(const Program& program, const std::string& culprit) {
  std::string op;
  for (const Node& n : program.nodes) {
    if (n.name == culprit || NodePath(n) == culprit) return OperatorOf(n);
    ForEachNode({n}, [&](const Node& inner, const std::string& scope) {
      if (!scope.empty() && NodePath(inner, scope) == culprit) op = OperatorOf(inner);
    });
  }
  return op;
}

namespace {

// What the kept nodes make and read: values made by kept nodes, values they read that no
// kept node made before (in order of first read).
struct KeptValues {
  std::set<std::string> made;
  std::set<std::string> read;
  std::vector<std::string> read_order;
};

KeptValues CopyKeptNodes(const Program& program, const std::vector<bool>& keep, Program* p) {
  KeptValues kept;
  for (size_t i = 0; i < program.nodes.size(); ++i) {
    if (!keep[i]) continue;
    const Node& n = program.nodes[i];
    for (const auto& v : NodeInputNames(n)) {
      if (!kept.made.count(v) && kept.read.insert(v).second) kept.read_order.push_back(v);
    }
    for (const auto& v : NodeOutputNames(n)) kept.made.insert(v);
    p->nodes.push_back(n);
  }
  return kept;
}

// SizeOf: a tensor value among `candidates` (not made by a kept node) with a dimension of
// exactly `symbol`, and that dimension; {"", -1} when none has it.
std::pair<std::string, int> SizeOf(const Program& program, const std::string& symbol,
                                   const std::vector<std::string>& candidates, const std::set<std::string>& made) {
  for (const auto& t : candidates) {
    auto it = program.tensor_values.find(t);
    if (made.count(t) || it == program.tensor_values.end()) continue;
    for (size_t d = 0; d < it->second.sizes.size(); ++d) {
      if (it->second.sizes[d].sym == symbol) return {t, static_cast<int>(d)};
    }
  }
  return {"", -1};
}

bool IsUnbacked(const std::string& symbol) {
  return symbol.size() > 1 && symbol[0] == 'u' && symbol.find_first_not_of("0123456789", 1) == std::string::npos;
}

// UnbackedIn: the unbacked symbols a serialized SymInt (or a list of them) names.
void UnbackedIn(const json& j, std::set<std::string>* out) {
  if (j.is_array()) {
    for (const auto& e : j) UnbackedIn(e, out);
    return;
  }
  if (!j.is_object() || !j.contains("as_expr")) return;
  for (const auto& s : SymbolsIn(j.at("as_expr").value("expr_str", ""))) {
    if (IsUnbacked(s)) out->insert(s);
  }
}

// UnbackedOf: the unbacked symbols the metadata of value `v` names (its sizes and strides,
// or, a symbolic int, its own expression).
std::set<std::string> UnbackedOf(const Program& p, const std::string& v) {
  std::set<std::string> out;
  const json& graph = p.document.at("graph_module").at("graph");
  const auto tv = graph.find("tensor_values");
  if (tv != graph.end() && tv->contains(v)) {
    const json& meta = tv->at(v);
    for (const char* field : {"sizes", "strides"}) {
      if (meta.contains(field)) UnbackedIn(meta.at(field), &out);
    }
  } else if (const json* ints = SymIntValues(graph); ints && ints->contains(v)) {
    UnbackedIn(ints->at(v), &out);
  }
  return out;
}

// DataDependent: the program has data-dependent sizes (export records a range for each).
bool DataDependent(const Program& p) {
  for (const auto& [symbol, range] : p.range_constraints) {
    if (IsUnbacked(symbol)) return true;
  }
  return false;
}

// Binders: for each unbacked symbol, the node that binds it: the first whose outputs name it
// while none of its inputs does (a boolean mask's index, nonzero, item).
std::map<std::string, size_t> Binders(const Program& p) {
  std::map<std::string, size_t> binders;
  if (!DataDependent(p)) return binders;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    std::set<std::string> in;
    for (const auto& v : NodeInputNames(p.nodes[i])) {
      const auto s = UnbackedOf(p, v);
      in.insert(s.begin(), s.end());
    }
    for (const auto& v : NodeOutputNames(p.nodes[i])) {
      for (const auto& s : UnbackedOf(p, v)) {
        if (!in.count(s)) binders.emplace(s, i);
      }
    }
  }
  return binders;
}

// Specialised: a serialized SymInt with the symbols in `values` put in; EditRefused when its
// expression names one of them and cannot be evaluated.
json Specialised(const json& symint, const std::map<std::string, int64_t>& values) {
  if (!symint.is_object() || !symint.contains("as_expr")) return symint;
  const std::string expr = symint.at("as_expr").value("expr_str", "");
  bool names_one = false;
  for (const auto& s : SymbolsIn(expr)) names_one = names_one || values.count(s);
  if (!names_one) return symint;
  std::string why;
  const std::optional<int64_t> v = EvaluateSymExpr(expr, values, &why);
  if (!v) {
    throw EditRefused("cannot specialise the data-dependent size " + expr + " to the values observed" +
                      (why.empty() ? "" : ": " + why));
  }
  return json{{"as_int", *v}};
}

// SpecialiseUnbound: each unbacked symbol the edited program names that none of its nodes
// binds any more becomes the value the recorded run observed: in its values' metadata, its
// symbolic ints, its range_constraints. A cut through a data-dependent value so becomes an
// input of the observed size. EditRefused when a symbol has no observed value.
void SpecialiseUnbound(Program* p, const std::set<std::string>& still_bound) {
  if (!DataDependent(*p)) return;
  json& graph = p->document["graph_module"]["graph"];
  std::set<std::string> named;
  for (const auto& [name, meta] : p->tensor_values) {
    const auto s = UnbackedOf(*p, name);
    named.insert(s.begin(), s.end());
  }
  for (const auto& n : p->nodes) {
    for (const auto& v : NodeInputNames(n)) {
      const auto s = UnbackedOf(*p, v);
      named.insert(s.begin(), s.end());
    }
  }
  std::map<std::string, int64_t> values;
  for (const auto& s : named) {
    if (still_bound.count(s)) continue;
    auto it = p->observed_symbols.find(s);
    if (it == p->observed_symbols.end()) {
      throw EditRefused("the edit cuts away the node that binds the data-dependent size " + s +
                        ", and no recorded run observed its value");
    }
    values[s] = it->second;
  }
  if (values.empty()) return;
  if (graph.contains("tensor_values")) {
    for (auto& [name, meta] : graph["tensor_values"].items()) {
      for (const char* field : {"sizes", "strides"}) {
        if (!meta.contains(field)) continue;
        for (auto& d : meta[field]) d = Specialised(d, values);
      }
      if (meta.contains("storage_offset")) meta["storage_offset"] = Specialised(meta["storage_offset"], values);
      if (p->tensor_values.count(name)) p->tensor_values[name] = TensorMetaFromJson(name, meta, "a specialised value");
    }
  }
  if (graph.contains("sym_int_values")) {
    for (auto& [name, v] : graph["sym_int_values"].items()) v = Specialised(v, values);
  }
  for (const auto& [s, v] : values) {
    p->range_constraints.erase(s);
    if (p->document.contains("range_constraints")) p->document["range_constraints"].erase(s);
  }
}

// A cut symbolic int made again: the node that reads it off a tensor's dimension.
Node SymSizeNode(const std::string& value, const std::string& tensor, int dim) {
  Node n;
  n.name = value;
  n.target = "torch.ops.aten.sym_size.int";
  n.inputs = {{"self", TensorArg(tensor), 1}, {"dim", json{{"as_int", dim}}, 1}};
  n.outputs = {json{{"as_sym_int", {{"as_name", value}}}}};
  return n;
}

// RemakeCutSymbols: symbolic ints the kept nodes read but no kept node makes. Each is made
// again from a tensor input with a dimension of exactly that symbol (aten.sym_size.int), so
// the dimension stays dynamic with its range; else it is specialised to the value export
// observed (its hint); else the edit is refused. None becomes an input.
void RemakeCutSymbols(const Program& program, const std::set<std::string>& existing, const std::set<std::string>& still_bound,
                      KeptValues* kept, Program* p) {
  std::vector<Node> derived;
  std::map<std::string, int64_t> specialised;
  std::vector<std::string> extra_reads;
  auto cut_symbol = [&](const std::string& v) {
    return !existing.count(v) && !kept->made.count(v) && IsSymValue(program, v);
  };
  const json& graph = program.document.at("graph_module").at("graph");
  const auto sym_ints = graph.find("sym_int_values");
  for (const auto& v : kept->read_order) {
    if (!cut_symbol(v)) continue;
    if (sym_ints == graph.end() || !sym_ints->is_object() || !sym_ints->contains(v)) {
      throw EditRefused("cutting at '" + v + "' would make a symbolic float or bool an input, which is not supported");
    }
    const json& sym = sym_ints->at(v);
    if (sym.contains("as_int") && sym.at("as_int").is_number_integer()) {
      specialised[v] = sym.at("as_int").get<int64_t>();
      continue;
    }
    // A data-dependent size whose binding node is cut away: the value the run observed.
    if (sym.contains("as_expr")) {
      const std::string expr = sym.at("as_expr").value("expr_str", "");
      bool unbound = false;
      for (const auto& s : SymbolsIn(expr)) unbound = unbound || (IsUnbacked(s) && !still_bound.count(s));
      if (unbound) {
        std::string why;
        const std::optional<int64_t> observed = EvaluateSymExpr(expr, program.observed_symbols, &why);
        if (!observed) {
          throw EditRefused("cutting at '" + v + "' leaves the data-dependent size " + expr + " unbound, and " +
                            (why.empty() ? "no recorded run observed its value" : "its observed value cannot be computed: " + why));
        }
        specialised[v] = *observed;
        continue;
      }
    }
    const json expr = sym.value("as_expr", json::object());
    // Sizes name a plain symbol as DimFromJson does ("s77"). Only a plain symbol can be
    // read off a dimension; an expression of several symbols cannot be an input's size.
    const std::string symbol = sym.contains("as_expr") ? DimFromJson(sym).sym : "";
    const bool plain_symbol =
        !symbol.empty() &&
        symbol.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos;
    std::pair<std::string, int> size{"", -1};
    if (plain_symbol) size = SizeOf(program, symbol, kept->read_order, kept->made);
    if (plain_symbol && size.first.empty()) {
      size = SizeOf(program, symbol, UserInputNames(program), {});
      if (!size.first.empty()) extra_reads.push_back(size.first);
    }
    if (!size.first.empty()) {
      derived.push_back(SymSizeNode(v, size.first, size.second));
      continue;
    }
    const json hint = expr.value("hint", json());
    if (hint.is_object() && hint.contains("as_int") && hint.at("as_int").is_number_integer()) {
      specialised[v] = hint.at("as_int").get<int64_t>();
      continue;
    }
    throw EditRefused("cutting at '" + v + "' would make the symbolic int " + expr.value("expr_str", "") +
                      " an input: no input tensor has that dimension and export recorded no value for it");
  }
  for (auto& n : p->nodes) {
    for (auto& a : n.inputs) SpecialiseSymInts(&a.arg, specialised);
  }
  p->nodes.insert(p->nodes.begin(), derived.begin(), derived.end());
  std::vector<std::string> order;
  for (const auto& v : kept->read_order) {
    if (!cut_symbol(v)) order.push_back(v);
  }
  for (const auto& t : extra_reads) {
    if (kept->read.insert(t).second) order.push_back(t);
  }
  for (const auto& n : derived) kept->made.insert(n.name);
  kept->read_order = std::move(order);
}

// SetOutputs: the edited program's user outputs by `mode`, then the buffer mutations whose
// new value is still made. Returns the names of the user outputs.
std::set<std::string> SetOutputs(const Program& program, const std::vector<bool>& keep, OutputMode mode,
                                 const std::set<std::string>& made, Program* p) {
  p->output_specs.clear();
  std::set<std::string> out_names;
  auto add_output = [&](const std::string& v) {
    if (!out_names.insert(v).second) return;
    OutputSpecEntry e;
    e.kind = OutputKind::kUserOutput;
    e.arg = TensorArg(v);
    e.value_name = v;
    p->output_specs.push_back(std::move(e));
  };
  if (mode == OutputMode::kPreserve) {
    for (const auto& s : program.output_specs) {
      if (s.kind == OutputKind::kUserOutput && made.count(s.value_name)) add_output(s.value_name);
    }
  } else if (mode == OutputMode::kLast) {
    if (!p->nodes.empty()) {
      for (const auto& v : NodeOutputNames(p->nodes.back())) {
        if (!IsSymValue(program, v)) add_output(v);
      }
    }
  } else {
    std::set<std::string> read_by_removed, current_outputs;
    for (size_t i = 0; i < program.nodes.size(); ++i) {
      if (keep[i]) continue;
      for (const auto& v : NodeInputNames(program.nodes[i])) read_by_removed.insert(v);
    }
    for (const auto& s : program.output_specs) {
      if (s.kind == OutputKind::kUserOutput && !s.value_name.empty()) current_outputs.insert(s.value_name);
    }
    for (const auto& n : p->nodes) {
      for (const auto& v : NodeOutputNames(n)) {
        if ((read_by_removed.count(v) || current_outputs.count(v)) && !IsSymValue(program, v)) add_output(v);
      }
    }
  }
  for (const auto& s : program.output_specs) {
    if (s.kind != OutputKind::kUserOutput && made.count(s.value_name)) p->output_specs.push_back(s);
  }
  return out_names;
}

// SetInputs: the existing specs the kept nodes (or kept outputs) read, then the cut edges
// as user inputs; user inputs first (existing order, then cut edges), then the lifted
// state, as export lays them out.
void SetInputs(const Program& program, const KeptValues& kept, const std::set<std::string>& existing,
               const std::set<std::string>& out_names, Program* p) {
  p->input_specs.clear();
  for (const auto& s : program.input_specs) {
    if (kept.read.count(s.value_name) || out_names.count(s.value_name)) p->input_specs.push_back(s);
  }
  std::vector<InputSpecEntry> cut;
  for (const auto& v : kept.read_order) {
    if (existing.count(v)) continue;
    if (IsSymValue(program, v)) {
      throw EditRefused("cutting at '" + v + "' would make a symbolic value an input, which is not supported");
    }
    cut.push_back(UserInputSpec(v));
  }
  std::vector<InputSpecEntry> ordered;
  for (const auto& s : p->input_specs) if (s.kind != InputKind::kUserInput) ordered.push_back(s);
  for (const auto& s : p->input_specs) if (s.kind == InputKind::kUserInput) ordered.push_back(s);
  for (auto& s : cut) ordered.push_back(std::move(s));
  p->input_specs = std::move(ordered);
}

}  // namespace

Program KeepNodes(const Program& program, const std::vector<bool>& keep, OutputMode mode) {
  Program p = program;
  p.nodes.clear();
  KeptValues kept = CopyKeptNodes(program, keep, &p);
  std::set<std::string> existing;
  for (const auto& s : program.input_specs) existing.insert(s.value_name);
  // The data-dependent sizes a kept node still binds stay symbolic; the others are specialised.
  std::set<std::string> still_bound;
  for (const auto& [symbol, node] : Binders(program)) {
    if (keep[node]) still_bound.insert(symbol);
  }
  RemakeCutSymbols(program, existing, still_bound, &kept, &p);
  const std::set<std::string> out_names = SetOutputs(program, keep, mode, kept.made, &p);
  SetInputs(program, kept, existing, out_names, &p);
  FinishEdit(&p);
  SpecialiseUnbound(&p, still_bound);
  return mode == OutputMode::kFrontier ? RemoveUnusedInputs(p) : RemoveUnusedInputs(EliminateDeadCode(p));
}

Program DropOutputs(const Program& program, const std::set<std::string>& outputs) {
  Program p = program;
  p.output_specs.clear();
  for (const auto& s : program.output_specs) {
    if (!(s.kind == OutputKind::kUserOutput && outputs.count(s.value_name))) p.output_specs.push_back(s);
  }
  FinishEdit(&p);
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
  // Values that may share memory (a view and its base, an in-place result and its self).
  AliasClasses classes(p);
  const auto find = [&](const std::string& v) { return classes.Of(v); };
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
  FinishEdit(&p);
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
  FinishEdit(&p);
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
