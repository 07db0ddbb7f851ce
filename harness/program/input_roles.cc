#include "harness/program/input_roles.h"

#include <optional>
#include <set>

#include "harness/program/sym_expr.h"

namespace aoti {
namespace {

// Operators whose output holds (some of) their first tensor argument's values unchanged:
// an index that was valid for what it indexes stays valid through them.
bool KeepsValues(const std::string& op) {
  static const std::set<std::string> ops = {
      "aten::view",      "aten::reshape", "aten::_unsafe_view", "aten::flatten",   "aten::squeeze",
      "aten::unsqueeze", "aten::contiguous", "aten::clone",     "aten::alias",     "aten::expand",
      "aten::permute",   "aten::transpose", "aten::t",          "aten::_to_copy",  "aten::to",
      "aten::detach",    "aten::view_copy", "aten::select",     "aten::slice",     "aten::lift_fresh_copy",
  };
  return ops.count(op) > 0;
}

bool IsInteger(c10::ScalarType t) { return c10::isIntegralType(t, /*includeBool=*/false); }

const nlohmann::json* Arg(const Node& node, const std::string& name) {
  for (const auto& in : node.inputs) {
    if (in.name == name) return &in.arg;
  }
  return nullptr;
}

std::string TensorName(const nlohmann::json* arg) {
  if (!arg || !arg->is_object() || !arg->contains("as_tensor")) return "";
  return (*arg)["as_tensor"].value("name", "");
}

std::optional<int64_t> IntArg(const nlohmann::json* arg) {
  if (!arg || !arg->is_object() || !arg->contains("as_int")) return std::nullopt;
  return (*arg)["as_int"].get<int64_t>();
}

bool BoolArg(const nlohmann::json* arg, bool otherwise) {
  if (!arg || !arg->is_object() || !arg->contains("as_bool")) return otherwise;
  return (*arg)["as_bool"].get<bool>();
}

// DimOf: the size of dimension `dim` (negative counts from the end) of value `name`.
std::optional<DimSpec> DimOf(const Program& program, const std::string& name, int64_t dim) {
  const auto it = program.tensor_values.find(name);
  if (it == program.tensor_values.end()) return std::nullopt;
  const auto& sizes = it->second.sizes;
  const int64_t rank = static_cast<int64_t>(sizes.size());
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank) return std::nullopt;
  return sizes[static_cast<size_t>(dim)];
}

class RoleFinder {
 public:
  explicit RoleFinder(const Program& program) : program_(program) {
    const auto sig = program.Signature();
    roles_.resize(sig.user_inputs.size());
    size_t k = 0;
    for (const auto& spec : program.input_specs) {
      if (spec.kind != InputKind::kUserInput) continue;
      if (k < sig.user_inputs.size() && IsInteger(sig.user_inputs[k].dtype) && !spec.value_name.empty()) {
        source_[spec.value_name] = k;
      }
      ++k;
    }
  }

  std::vector<InputRole> Find() {
    for (const auto& node : program_.nodes) Visit(node);
    return roles_;
  }

 private:
  // The user input whose values `value` holds, if any.
  std::optional<size_t> Source(const std::string& value) const {
    const auto it = source_.find(value);
    if (it == source_.end()) return std::nullopt;
    return it->second;
  }

  std::string Why(const std::string& arg, const Node& node) const {
    return arg + " of node '" + node.name + "' (" + node.target + ")";
  }

  void Index(size_t input, const DimSpec& bound, const std::string& why) {
    InputRole& r = roles_[input];
    if (r.kind == InputRole::Kind::kOffsets) return;
    // The tighter of two static bounds; a static bound over a symbolic one.
    if (r.kind == InputRole::Kind::kIndex) {
      const bool tighter = !bound.is_symbolic() && (r.bound.is_symbolic() || bound.size < r.bound.size);
      if (!tighter) return;
    }
    r.kind = InputRole::Kind::kIndex;
    r.bound = bound;
    r.why = why;
  }

  void Visit(const Node& node) {
    std::string op, overload;
    if (!ParseTarget(node.target, &op, &overload)) return;
    if (KeepsValues(op) && !node.inputs.empty() && !node.outputs.empty()) {
      const auto from = Source(TensorName(&node.inputs[0].arg));
      const std::string out = TensorName(&node.outputs[0]);
      if (from && !out.empty()) source_[out] = *from;
      return;
    }
    if (op == "aten::embedding_bag" || op == "aten::_embedding_bag" || op == "aten::_embedding_bag_forward_only") {
      const std::string weight = TensorName(Arg(node, "weight")), ids = TensorName(Arg(node, "indices"));
      if (const auto in = Source(ids); in) {
        if (const auto rows = DimOf(program_, weight, 0)) Index(*in, *rows, Why("indices", node));
      }
      if (const auto in = Source(TensorName(Arg(node, "offsets"))); in && roles_[*in].kind != InputRole::Kind::kOffsets) {
        const auto it = program_.tensor_values.find(ids);
        if (it == program_.tensor_values.end()) return;
        InputRole& r = roles_[*in];
        r.kind = InputRole::Kind::kOffsets;
        r.ids_sizes = it->second.sizes;
        r.include_last = BoolArg(Arg(node, "include_last_offset"), false);
        r.why = Why("offsets", node);
      }
      return;
    }
    if (op == "aten::embedding") {
      if (const auto in = Source(TensorName(Arg(node, "indices")))) {
        if (const auto rows = DimOf(program_, TensorName(Arg(node, "weight")), 0)) Index(*in, *rows, Why("indices", node));
      }
      return;
    }
    if (op == "aten::index_select" || op == "aten::gather") {
      const auto in = Source(TensorName(Arg(node, "index")));
      const auto dim = IntArg(Arg(node, "dim"));
      if (in && dim) {
        if (const auto size = DimOf(program_, TensorName(Arg(node, "self")), *dim)) Index(*in, *size, Why("index", node));
      }
      return;
    }
    if (op == "aten::index" && overload == "Tensor") {
      // self[i0, i1, ...]: the k-th index tensor indexes dimension k. Negative indices are
      // valid there; the sample's own range keeps them where they were.
      const nlohmann::json* list = Arg(node, "indices");
      if (!list || !list->is_object() || !list->contains("as_optional_tensors")) return;
      const std::string self = TensorName(Arg(node, "self"));
      int64_t k = 0;
      for (const auto& t : (*list)["as_optional_tensors"]) {
        if (t.contains("as_tensor")) {
          if (const auto in = Source(t["as_tensor"].value("name", ""))) {
            if (const auto size = DimOf(program_, self, k)) Index(*in, *size, Why("indices[" + std::to_string(k) + "]", node));
          }
        }
        ++k;
      }
    }
  }

  const Program& program_;
  std::vector<InputRole> roles_;
  std::map<std::string, size_t> source_;  // value -> the user input whose values it holds
};

}  // namespace

std::optional<int64_t> EvaluateDim(const DimSpec& d, const std::map<std::string, int64_t>& symbols) {
  if (!d.is_symbolic()) return d.size;
  return EvaluateSymExpr(d.sym, symbols);
}

std::vector<InputRole> InputRoles(const Program& program) { return RoleFinder(program).Find(); }

}  // namespace aoti
