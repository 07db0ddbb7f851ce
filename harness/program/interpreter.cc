#include "harness/program/interpreter.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <variant>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ScalarOps.h>
#include <ATen/autocast_mode.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/empty.h>
#include <ATen/core/stack.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/Exception.h>

#include "harness/program/python_ops.h"
#include "harness/util/errors.h"
#include "harness/util/json_util.h"
#include "harness/archive/tensor_io.h"

namespace aoti {
namespace {

using json = nlohmann::json;

// A reference to a graph value, or a literal: elements of lists that mix both.
using Ref = std::variant<std::string, c10::IValue>;

enum class ArgKind { kConst, kValue, kTensorList, kOptionalTensorList, kScalarList };

// ArgPlan: how to build one schema argument from the environment.
struct ArgPlan {
  ArgKind kind = ArgKind::kConst;
  c10::IValue constant;
  std::string value;
  std::vector<std::optional<std::string>> tensors;  // kTensorList / kOptionalTensorList
  std::vector<Ref> scalars;                         // kScalarList (sym ints/floats/bools)
  char scalar_type = 'i';                           // 'i' int, 'f' float, 'b' bool
  bool wrap_scalar = false;  // the schema wants a Tensor: a number becomes a wrapped 0-dim tensor
};

// kSkip: a node the float64 run leaves out (a metadata assert of the native dtypes).
// kHigherOrder: cond, while_loop, map_impl, scan and the autocast and grad-mode wrappers,
// each running its subgraphs.
enum class StepKind { kOperator, kGetItem, kPythonOp, kSkip, kHigherOrder };

bool IsFloating(c10::ScalarType t) { return c10::isFloatingType(t); }

std::string Where(const Node& node) { return "node '" + node.name + "' (" + node.target + ")"; }

}  // namespace

// A value whose size (or whose own value, for a symbolic int) binds an unbacked symbol
// (u0): what a data-dependent op (nonzero, a boolean mask, item) made.
struct SymbolBinding {
  std::string value;
  int dim = -1;        // the dimension of a tensor value; -1: the value is the symbolic int
  std::string symbol;  // "u0"
};

struct Interpreter::Step {
  const Node* node = nullptr;
  StepKind kind = StepKind::kOperator;
  std::optional<c10::OperatorHandle> op;
  std::vector<ArgPlan> args;           // for kHigherOrder: the arguments that are not subgraphs
  std::string python_op;               // for kPythonOp: "add", "mul", ...
  std::string hop;                     // for kHigherOrder: "cond", "while_loop", ...
  std::vector<std::unique_ptr<GraphPlan>> bodies;  // for kHigherOrder: its subgraphs, in order
  std::vector<SymbolBinding> binds;    // unbacked symbols its outputs bind
  std::vector<std::string> free_after; // values whose last use is this step
};

// GraphPlan: a graph resolved once: the program's own, or a subgraph (which it owns).
struct Interpreter::GraphPlan {
  std::string scope;  // "" for the program's graph; "cond/true_graph_0" for a subgraph
  std::unique_ptr<Graph> graph;  // a subgraph's; null for the program's
  std::vector<std::unique_ptr<Step>> steps;
};

namespace {

c10::IValue ScalarTypeArg(int code, bool fp64, const std::string& what) {
  c10::ScalarType t = ScalarTypeFromSchema(code, what);
  if (fp64 && IsFloating(t)) t = c10::ScalarType::Double;
  return c10::IValue(t);
}

c10::MemoryFormat MemoryFormatFromSchema(int code, const std::string& what) {
  switch (code) {
    case 1: return c10::MemoryFormat::Contiguous;
    case 2: return c10::MemoryFormat::ChannelsLast;
    case 3: return c10::MemoryFormat::ChannelsLast3d;
    case 4: return c10::MemoryFormat::Preserve;
    default: throw HarnessError(what + ": unknown memory format code " + std::to_string(code));
  }
}

c10::Layout LayoutFromSchema(int code, const std::string& what) {
  switch (code) {
    case 1: return c10::Layout::Sparse;
    case 2: return c10::Layout::SparseCsr;
    case 3: return c10::Layout::SparseCsc;
    case 4: return c10::Layout::SparseBsr;
    case 5: return c10::Layout::SparseBsc;
    case 6: return c10::Layout::Mkldnn;
    case 7: return c10::Layout::Strided;
    default: throw HarnessError(what + ": unknown layout code " + std::to_string(code));
  }
}

// ReadDouble: export writes non-finite floats as strings ("Infinity", "-Infinity", "NaN").
double ReadDouble(const json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "Infinity" || s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity" || s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "NaN" || s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  throw json::type_error::create(302, "expected a float, got " + j.dump(), &j);
}

Ref ScalarRef(const json& j, char type) {
  if (j.contains("as_name")) return j.at("as_name").get<std::string>();
  if (type == 'f') return c10::IValue(ReadDouble(j.at("as_float")));
  if (type == 'b') return c10::IValue(j.at("as_bool").get<bool>());
  return c10::IValue(JsonInt(j.at("as_int"), "a symbolic int"));
}

// CoerceToSchema: a constant that export wrote as an int where the schema wants a float
// (`float eps`, `float? p`, `float[]`) becomes a double, as Python's call would make it;
// the boxed kernel reads toDouble() and would refuse an int.
void CoerceToSchema(const c10::TypePtr& declared, ArgPlan* p) {
  if (p->kind != ArgKind::kConst) return;
  c10::TypePtr type = declared;
  if (auto opt = type->cast<c10::OptionalType>()) type = opt->getElementType();
  if (type->kind() == c10::TypeKind::FloatType && p->constant.isInt()) {
    p->constant = c10::IValue(static_cast<double>(p->constant.toInt()));
  } else if (auto list = type->cast<c10::ListType>();
             list && list->getElementType()->kind() == c10::TypeKind::FloatType && p->constant.isIntList()) {
    std::vector<double> values;
    for (int64_t v : p->constant.toIntVector()) values.push_back(static_cast<double>(v));
    p->constant = c10::IValue(values);
  }
}

// PlanArgument turns an Argument union into an ArgPlan.
ArgPlan PlanArgument(const json& arg, bool fp64, const std::string& what) {
  ArgPlan p;
  if (!arg.is_object() || arg.size() != 1) throw HarnessError(what + ": malformed argument " + arg.dump());
  const std::string& key = arg.begin().key();
  const json& v = arg.begin().value();
  if (key == "as_none") {
    p.constant = c10::IValue();
  } else if (key == "as_tensor") {
    p.kind = ArgKind::kValue;
    p.value = v.at("name").get<std::string>();
  } else if (key == "as_tensors") {
    p.kind = ArgKind::kTensorList;
    for (const auto& t : v) p.tensors.emplace_back(t.at("name").get<std::string>());
  } else if (key == "as_optional_tensors") {
    p.kind = ArgKind::kOptionalTensorList;
    for (const auto& t : v) {
      if (t.contains("as_tensor")) p.tensors.emplace_back(t.at("as_tensor").at("name").get<std::string>());
      else p.tensors.emplace_back(std::nullopt);
    }
  } else if (key == "as_optional_tensor") {
    if (v.contains("as_tensor")) {
      p.kind = ArgKind::kValue;
      p.value = v.at("as_tensor").at("name").get<std::string>();
    }
  } else if (key == "as_int") {
    p.constant = c10::IValue(JsonInt(v, what));
  } else if (key == "as_ints") {
    p.constant = c10::IValue(JsonInts(v, what));
  } else if (key == "as_float") {
    p.constant = c10::IValue(ReadDouble(v));
  } else if (key == "as_floats") {
    std::vector<double> list;
    for (const auto& f : v) list.push_back(ReadDouble(f));
    p.constant = c10::IValue(list);
  } else if (key == "as_bool") {
    p.constant = c10::IValue(v.get<bool>());
  } else if (key == "as_bools") {
    c10::List<bool> list;
    for (const auto& b : v) list.push_back(b.get<bool>());
    p.constant = c10::IValue(list);
  } else if (key == "as_string") {
    p.constant = c10::IValue(v.get<std::string>());
  } else if (key == "as_strings") {
    c10::List<std::string> list;
    for (const auto& s : v) list.push_back(s.get<std::string>());
    p.constant = c10::IValue(list);
  } else if (key == "as_sym_int" || key == "as_sym_float" || key == "as_sym_bool") {
    const char type = key == "as_sym_int" ? 'i' : key == "as_sym_float" ? 'f' : 'b';
    Ref r = ScalarRef(v, type);
    if (auto* name = std::get_if<std::string>(&r)) {
      p.kind = ArgKind::kValue;
      p.value = *name;
    } else {
      p.constant = std::get<c10::IValue>(r);
    }
  } else if (key == "as_sym_ints" || key == "as_sym_floats" || key == "as_sym_bools") {
    p.kind = ArgKind::kScalarList;
    p.scalar_type = key == "as_sym_ints" ? 'i' : key == "as_sym_floats" ? 'f' : 'b';
    for (const auto& e : v) p.scalars.push_back(ScalarRef(e, p.scalar_type));
  } else if (key == "as_scalar_type") {
    p.constant = ScalarTypeArg(JsonInt32(v, what), fp64, what);
  } else if (key == "as_memory_format") {
    p.constant = c10::IValue(MemoryFormatFromSchema(JsonInt32(v, what), what));
  } else if (key == "as_layout") {
    p.constant = c10::IValue(LayoutFromSchema(JsonInt32(v, what), what));
  } else if (key == "as_device") {
    p.constant = c10::IValue(c10::Device(DeviceNameFromSchema(v, what)));
  } else if (key == "as_complex") {
    p.constant = c10::IValue(c10::complex<double>(JsonDouble(v.at("real"), what), JsonDouble(v.at("imag"), what)));
  } else {
    // as_graph (higher-order ops), as_custom_obj, as_operator, as_nested_tensors, ...
    throw HarnessError(what + ": argument kind '" + key + "' is not supported by the interpreter");
  }
  return p;
}

const c10::IValue& Lookup(const std::unordered_map<std::string, c10::IValue>& env,
                          const std::string& name, const Node& node) {
  auto it = env.find(name);
  if (it == env.end()) {
    throw HarnessError(Where(node) + ": uses value '" + name + "', which no earlier node or input defines");
  }
  return it->second;
}

// WrapScalar: a Python number passed where the schema takes a Tensor becomes a 0-dim
// "wrapped number" tensor, so type promotion treats it as Python eager does.
c10::IValue WrapScalar(const c10::IValue& v) {
  if (!(v.isInt() || v.isDouble() || v.isBool() || v.isComplexDouble())) return v;
  at::Tensor t = at::scalar_to_tensor(v.toScalar());
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return c10::IValue(t);
}

c10::IValue MaterializeRaw(const ArgPlan& p, const std::unordered_map<std::string, c10::IValue>& env,
                           const Node& node);

c10::IValue Materialize(const ArgPlan& p, const std::unordered_map<std::string, c10::IValue>& env,
                        const Node& node) {
  return p.wrap_scalar ? WrapScalar(MaterializeRaw(p, env, node)) : MaterializeRaw(p, env, node);
}

c10::IValue MaterializeRaw(const ArgPlan& p, const std::unordered_map<std::string, c10::IValue>& env,
                           const Node& node) {
  switch (p.kind) {
    case ArgKind::kConst: return p.constant;
    case ArgKind::kValue: return Lookup(env, p.value, node);
    case ArgKind::kTensorList: {
      c10::List<at::Tensor> list;
      list.reserve(p.tensors.size());
      for (const auto& t : p.tensors) list.push_back(Lookup(env, *t, node).toTensor());
      return c10::IValue(list);
    }
    case ArgKind::kOptionalTensorList: {
      c10::List<std::optional<at::Tensor>> list;
      list.reserve(p.tensors.size());
      for (const auto& t : p.tensors) {
        list.push_back(t ? std::optional<at::Tensor>(Lookup(env, *t, node).toTensor()) : std::nullopt);
      }
      return c10::IValue(list);
    }
    case ArgKind::kScalarList: {
      auto get = [&](const Ref& r) -> c10::IValue {
        if (auto* name = std::get_if<std::string>(&r)) return Lookup(env, *name, node);
        return std::get<c10::IValue>(r);
      };
      if (p.scalar_type == 'f') {
        std::vector<double> v;
        for (const auto& r : p.scalars) v.push_back(get(r).toDouble());
        return c10::IValue(v);
      }
      if (p.scalar_type == 'b') {
        c10::List<bool> v;
        for (const auto& r : p.scalars) v.push_back(get(r).toBool());
        return c10::IValue(v);
      }
      std::vector<int64_t> v;
      for (const auto& r : p.scalars) v.push_back(get(r).toInt());
      return c10::IValue(v);
    }
  }
  return c10::IValue();
}

// The names passed to the schema arguments that `pick` selects.
std::vector<std::string> ArgumentsWhere(const Node& node,
                                        const std::function<bool(const c10::FunctionSchema&, const c10::Argument&)>& pick) {
  std::string name, overload;
  if (!ParseTarget(node.target, &name, &overload)) return {};
  const auto op = c10::Dispatcher::singleton().findSchema({name, overload});
  if (!op) return {};
  const auto& schema = op->schema();
  const auto& args = schema.arguments();
  std::vector<std::string> out;
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    const NamedArgument& in = node.inputs[k];
    const c10::Argument* formal = nullptr;
    for (const auto& a : args) {
      if (a.name() == in.name) formal = &a;
    }
    if (formal == nullptr && in.kind != 2 && k < args.size()) formal = &args[k];
    if (formal != nullptr && pick(schema, *formal)) ArgumentValueNames(in.arg, &out);
  }
  return out;
}

}  // namespace

std::vector<std::string> MutatedValueNames(const Node& node) {
  return ArgumentsWhere(node, [](const c10::FunctionSchema&, const c10::Argument& a) {
    return a.alias_info() != nullptr && a.alias_info()->isWrite();
  });
}

std::vector<std::string> AliasedValueNames(const Node& node) {
  return ArgumentsWhere(node, [](const c10::FunctionSchema& schema, const c10::Argument& a) {
    if (a.alias_info() == nullptr) return false;
    for (const auto& r : schema.returns()) {
      if (r.alias_info() != nullptr) return true;
    }
    return false;
  });
}

namespace {

// Names of the values an ArgPlan reads.
void InputNames(const ArgPlan& p, std::vector<std::string>* names) {
  if (p.kind == ArgKind::kValue) names->push_back(p.value);
  for (const auto& t : p.tensors) if (t) names->push_back(*t);
  for (const auto& r : p.scalars) if (auto* n = std::get_if<std::string>(&r)) names->push_back(*n);
}

void Bind(const json& out, const c10::IValue& value, const Node& node,
          std::unordered_map<std::string, c10::IValue>* env) {
  if (!out.is_object() || out.size() != 1) {
    throw HarnessError(Where(node) + ": an output is " + out.dump() + ", expected an object of one kind (as_tensor, ...)");
  }
  const std::string& key = out.begin().key();
  const json& v = out.begin().value();
  if (key == "as_tensor") {
    if (!value.isTensor()) throw HarnessError(Where(node) + ": expected a tensor result, got " + value.tagKind());
    (*env)[v.at("name").get<std::string>()] = value;
  } else if (key == "as_tensors" || key == "as_optional_tensors") {
    if (!value.isList()) throw HarnessError(Where(node) + ": expected a list result, got " + value.tagKind());
    const auto list = value.toListRef();
    if (list.size() != v.size()) {
      throw HarnessError(Where(node) + ": returned " + std::to_string(list.size()) + " tensors, the program names " + std::to_string(v.size()));
    }
    for (size_t i = 0; i < v.size(); ++i) {
      if (key == "as_tensors") (*env)[v[i].at("name").get<std::string>()] = list[i];
      else if (v[i].contains("as_tensor")) (*env)[v[i].at("as_tensor").at("name").get<std::string>()] = list[i];
    }
  } else if ((key == "as_sym_int" || key == "as_sym_float" || key == "as_sym_bool") && v.contains("as_name")) {
    (*env)[v.at("as_name").get<std::string>()] = value;
  }
  // as_none and literal outputs bind nothing.
}

// Promote: a floating tensor in float64, as upstream's cast_to_fp64 casts the model and
// its floating inputs (complex, integer and bool tensors stay as they are).
at::Tensor Promote(const at::Tensor& t) {
  if (!t.defined()) return t;
  if (IsFloating(t.scalar_type()) && t.scalar_type() != at::kDouble) return t.to(at::kDouble);
  return t;
}

// DequantizesTo: the argument is the float dtype a quantized_decomposed operator
// dequantizes to (out_dtype, output_dtype): in float64 mode the float math between
// quantization steps is float64's, as the reference defines it.
bool DequantizesTo(const c10::FunctionSchema& schema, const std::string& arg) {
  return (arg == "out_dtype" || arg == "output_dtype") && schema.name().rfind("quantized_decomposed::", 0) == 0;
}

// PromotesDtype: in float64 mode, does this argument's dtype become float64? As upstream's
// cast_dtype_args_to_fp64: the dtype of prims.convert_element_type, and dtype= keyword
// arguments; a positional dtype (aten.to.dtype's, the bitcast of aten.view.dtype) stays.
bool PromotesDtype(const c10::FunctionSchema& schema, const NamedArgument& arg) {
  if (DequantizesTo(schema, arg.name)) return true;
  if (arg.name != "dtype") return false;
  if (schema.name() == "prims::convert_element_type") return true;
  return arg.kind == 2;  // keyword
}

// RebaseState: the weights and constants `applies` to, re-made through one copy of each
// storage they share (tied weights, a buffer and its view), so they stay tied: `remake`
// turns a storage's flat view into the new flat tensor.
void RebaseState(ProgramState* state, const std::function<bool(const at::Tensor&)>& applies,
                 const std::function<at::Tensor(const at::Tensor&)>& remake) {
  std::map<const c10::StorageImpl*, at::Tensor> made;  // storage -> its new flat copy
  auto one = [&](at::Tensor& t) {
    if (!t.defined() || !applies(t)) return;
    const bool requires_grad = t.requires_grad();  // as upstream's model.to(...) keeps it
    const int64_t item = static_cast<int64_t>(t.element_size());
    at::Tensor view;
    if (t.storage().nbytes() % item != 0) {
      view = remake(t.detach());
    } else {
      auto it = made.find(t.storage().unsafeGetStorageImpl());
      if (it == made.end()) {
        at::Tensor flat = at::empty({0}, t.options().requires_grad(false));
        flat.set_(t.storage(), 0, {static_cast<int64_t>(t.storage().nbytes()) / item}, {1});
        it = made.emplace(t.storage().unsafeGetStorageImpl(), remake(flat)).first;
      }
      view = it->second.as_strided(t.sizes(), t.strides(), t.storage_offset());
    }
    t = view.detach();
    if (requires_grad) t.set_requires_grad(true);
  };
  for (auto& [k, t] : state->weights) one(t);
  for (auto& [k, t] : state->constants) one(t);
}

bool PromotedByFp64(const at::Tensor& t) { return IsFloating(t.scalar_type()) && t.scalar_type() != at::kDouble; }

}  // namespace

ProgramState PromoteStateToFp64(ProgramState state) {
  RebaseState(&state, PromotedByFp64, [](const at::Tensor& flat) { return Promote(flat); });
  return state;
}

namespace {

using Env = std::unordered_map<std::string, c10::IValue>;

// PlanOperator: an ATen (or custom) operator's step: its schema from the dispatcher, and
// each of the node's arguments planned against it (defaults filled in, names checked).
void PlanOperator(const Node& node, const std::string& name, const std::string& overload,
                  const InterpreterOptions& options, const std::string& what, Interpreter::Step* step) {
  step->op = c10::Dispatcher::singleton().findSchema({name, overload});
  if (!step->op) {
    throw HarnessError(what + ": operator '" + name + "' overload '" + (overload.empty() ? "default" : overload) +
                       "' is not registered; link the library that defines it (TORCH_LIBRARY) into the test");
  }
  const c10::FunctionSchema& schema = step->op->schema();
  // The float64 run changes dtypes on purpose; an assert of the native metadata
  // (dtype=float32 on a value that is float64 here) does not hold there.
  if ((options.fp64 || !options.device.empty()) && schema.name() == "aten::_assert_tensor_metadata") {
    step->kind = StepKind::kSkip;
  }
  std::vector<bool> used(node.inputs.size(), false);
  for (const c10::Argument& sa : schema.arguments()) {
    auto it = std::find_if(node.inputs.begin(), node.inputs.end(),
                           [&](const NamedArgument& a) { return a.name == sa.name(); });
    if (it != node.inputs.end()) {
      used[it - node.inputs.begin()] = true;
      ArgPlan p = PlanArgument(it->arg, options.fp64 && PromotesDtype(schema, *it), what + " argument '" + sa.name() + "'");
      p.wrap_scalar = sa.type()->kind() == c10::TypeKind::TensorType;
      if (!options.device.empty() && p.constant.isDevice()) p.constant = c10::IValue(c10::Device(options.device));
      CoerceToSchema(sa.type(), &p);
      step->args.push_back(std::move(p));
    } else if (sa.default_value()) {
      ArgPlan p;
      p.constant = *sa.default_value();
      // A dequantize's out_dtype left at None means float32; float64 in float64 mode.
      if (options.fp64 && p.constant.isNone() && DequantizesTo(schema, sa.name())) p.constant = c10::IValue(c10::kDouble);
      step->args.push_back(std::move(p));
    } else {
      throw HarnessError(what + ": required argument '" + sa.name() + "' of " + schema.name() + " is missing");
    }
  }
  for (size_t k = 0; k < used.size(); ++k) {
    if (!used[k]) {
      throw HarnessError(what + ": argument '" + node.inputs[k].name + "' is not in the schema " + c10::toString(schema));
    }
  }
}

// The higher-order ops the interpreter runs, and how many subgraphs each takes.
const std::map<std::string, size_t>& KnownHigherOrderOps() {
  static const auto* ops = new std::map<std::string, size_t>{
      {"cond", 2}, {"while_loop", 2}, {"map_impl", 1}, {"scan", 1},
      {"wrap_with_autocast", 1}, {"wrap_with_set_grad_enabled", 1}};
  return *ops;
}

std::unique_ptr<Interpreter::GraphPlan> PlanGraph(std::unique_ptr<Graph> graph, const std::string& scope,
                                                  const std::map<std::string, TensorMeta>& tensor_values,
                                                  const nlohmann::json& graph_json, const std::vector<Node>& nodes,
                                                  const InterpreterOptions& options);

// PlanHigherOrder: a higher-order op's step: its arguments, and each subgraph planned in a
// scope of its own ("cond/true_graph_0").
void PlanHigherOrder(const Node& node, const std::string& scope, const InterpreterOptions& options,
                     const std::string& what, Interpreter::Step* step) {
  step->kind = StepKind::kHigherOrder;
  step->hop = HigherOrderName(node);
  const auto known = KnownHigherOrderOps().find(step->hop);
  if (known == KnownHigherOrderOps().end()) {
    throw UnsupportedConstruct(what + ": the higher-order op '" + step->hop +
                               "' is a construct the harness does not run yet (it runs cond, while_loop, map_impl, "
                               "scan, wrap_with_autocast and wrap_with_set_grad_enabled)");
  }
  // A subgraph's nodes are named by their address already (PlanHigherOrder renames them).
  const std::string path = node.name;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const json& arg = node.inputs[i].arg;
    if (arg.is_object() && arg.contains("as_graph")) {
      auto graph = std::make_unique<Graph>(ParseSubgraph(node, i, what));
      const std::string body_scope = path + "/" + graph->name;
      // Messages name an inner node by its address.
      for (Node& inner : graph->nodes) inner.name = body_scope + "/" + inner.name;
      const Graph& g = *graph;
      json graph_json = g.raw;
      step->bodies.push_back(PlanGraph(std::move(graph), body_scope, g.tensor_values, graph_json, g.nodes, options));
    } else {
      // No dtype of a higher-order op's is promoted: an autocast region's dtype stays, and
      // autocast leaves float64 tensors as they are.
      step->args.push_back(PlanArgument(arg, false, what));
    }
  }
  if (step->bodies.size() != known->second) {
    throw HarnessError(what + ": " + step->hop + " takes " + std::to_string(known->second) + " subgraph(s), the node has " +
                       std::to_string(step->bodies.size()));
  }
}

// PlanStep: a node resolved once: getitem, a Python operator, a higher-order op, or an
// operator call.
std::unique_ptr<Interpreter::Step> PlanStep(const Node& node, const std::string& scope, const InterpreterOptions& options) {
  auto step = std::make_unique<Interpreter::Step>();
  step->node = &node;
  const std::string what = Where(node);
  try {
    std::string name, overload;
    if (node.target == "_operator.getitem") {
      step->kind = StepKind::kGetItem;
      for (const auto& a : node.inputs) step->args.push_back(PlanArgument(a.arg, false, what));
    } else if (node.target.rfind("_operator.", 0) == 0 || node.target.rfind("torch.sym_", 0) == 0 ||
               node.target == "torch._sym_sqrt") {
      step->python_op = node.target.substr(node.target.find('.') + 1);
      if (!PythonOps().count(step->python_op)) {
        throw UnsupportedConstruct(what + ": the Python operator '" + node.target +
                                   "' is a construct the harness does not run yet");
      }
      step->kind = StepKind::kPythonOp;
      for (const auto& a : node.inputs) step->args.push_back(PlanArgument(a.arg, false, what));
    } else if (!HigherOrderName(node).empty()) {
      PlanHigherOrder(node, scope, options, what, step.get());
    } else if (ParseTarget(node.target, &name, &overload)) {
      PlanOperator(node, name, overload, options, what, step.get());
    } else {
      throw UnsupportedConstruct(what + ": the target '" + node.target +
                                 "' is not an operator; the harness does not run it yet");
    }
  } catch (const json::exception& e) {
    throw HarnessError(what + ": malformed argument: " + e.what());
  }
  return step;
}

// UnbackedSymbol: the plain symbol a size names when it is an unbacked one ("u0"), else "".
std::string UnbackedSymbol(const DimSpec& d) {
  const std::string& s = d.sym;
  if (s.size() < 2 || s[0] != 'u') return "";
  return s.find_first_not_of("0123456789", 1) == std::string::npos ? s : "";
}

// PlanBindings: the unbacked symbols each step's outputs bind (their sizes, or their own
// value for a symbolic int), from the graph's metadata.
void PlanBindings(const std::map<std::string, TensorMeta>& tensor_values, const json& graph_json,
                  Interpreter::Step* step) {
  const json* sym_ints = SymIntValues(graph_json);
  for (const auto& out : NodeOutputNames(*step->node)) {
    auto meta = tensor_values.find(out);
    if (meta != tensor_values.end()) {
      for (size_t d = 0; d < meta->second.sizes.size(); ++d) {
        const std::string sym = UnbackedSymbol(meta->second.sizes[d]);
        if (!sym.empty()) step->binds.push_back({out, static_cast<int>(d), sym});
      }
    } else if (sym_ints && sym_ints->contains(out)) {
      const std::string sym = UnbackedSymbol(DimFromJson(sym_ints->at(out)));
      if (!sym.empty()) step->binds.push_back({out, -1, sym});
    }
  }
}

// GraphOutputNames: the values a graph returns (its outputs' names).
std::set<std::string> GraphOutputNames(const std::vector<json>& outputs) {
  std::vector<std::string> names;
  for (const auto& o : outputs) ArgumentValueNames(o, &names);
  return {names.begin(), names.end()};
}

// ScheduleFrees: each value is freed after the step that reads it last (a value never
// read, at once); the graph's outputs are kept.
void ScheduleFrees(const std::set<std::string>& outputs, std::vector<std::unique_ptr<Interpreter::Step>>* steps) {
  std::unordered_map<std::string, size_t> last_use;
  for (size_t i = 0; i < steps->size(); ++i) {
    const Interpreter::Step& step = *(*steps)[i];
    std::vector<std::string> reads;
    for (const auto& p : step.args) InputNames(p, &reads);
    for (const auto& r : reads) last_use[r] = i;
    std::vector<std::string> defs;
    for (const auto& out : step.node->outputs) ArgumentValueNames(out, &defs);
    for (const auto& d : defs) last_use.emplace(d, i);
  }
  for (const auto& [name, step] : last_use) {
    if (!outputs.count(name)) (*steps)[step]->free_after.push_back(name);
  }
}

std::unique_ptr<Interpreter::GraphPlan> PlanGraph(std::unique_ptr<Graph> graph, const std::string& scope,
                                                  const std::map<std::string, TensorMeta>& tensor_values,
                                                  const json& graph_json, const std::vector<Node>& nodes,
                                                  const InterpreterOptions& options) {
  auto plan = std::make_unique<Interpreter::GraphPlan>();
  plan->scope = scope;
  plan->graph = std::move(graph);
  for (const Node& node : nodes) {
    plan->steps.push_back(PlanStep(node, scope, options));
    PlanBindings(tensor_values, graph_json, plan->steps.back().get());
  }
  if (plan->graph) ScheduleFrees(GraphOutputNames(plan->graph->outputs), &plan->steps);
  return plan;
}

// BindInputs: the program's inputs into `env`: copies of the user's tensors (on the run's
// device, promoted for float64), the lifted weights, buffers and constants. Returns the
// user inputs' names.
std::vector<std::string> BindInputs(const Program& program, ProgramState& state, const InterpreterOptions& options,
                                    const std::vector<at::Tensor>& user_inputs, Env* env) {
  std::vector<std::string> names;
  for (const auto& spec : program.input_specs) {
    switch (spec.kind) {
      case InputKind::kUserInput: {
        if (spec.value_name.empty()) {
          throw HarnessError("program input " + spec.arg.dump() + ": only tensor user inputs are supported");
        }
        if (names.size() >= user_inputs.size()) {
          throw HarnessError("the program takes more user inputs than the " + std::to_string(user_inputs.size()) +
                             " given; missing '" + spec.value_name + "'");
        }
        // The run works on a copy: in-place ops on a user input (export keeps x.add_(1) as
        // aten.add_ on the input) never reach the caller's tensor.
        at::Tensor t = CopyOf(user_inputs[names.size()]);
        if (!options.device.empty()) t = PlaceOnDevice(t, options.device, "user input '" + spec.value_name + "'");
        if (options.fp64) t = Promote(t);
        names.push_back(spec.value_name);
        (*env)[spec.value_name] = t;
        break;
      }
      case InputKind::kParameter:
      case InputKind::kBuffer:
      case InputKind::kTensorConstant: {
        const at::Tensor* t = state.Find(spec.target, spec.StoredWithConstants());
        if (t == nullptr) {
          throw HarnessError(std::string(InputKindName(spec.kind)) + " '" + spec.target + "' (input '" +
                             spec.value_name + "') is missing from the archive: neither data/weights/ nor "
                             "data/constants/ holds it");
        }
        (*env)[spec.value_name] = *t;
        break;
      }
      case InputKind::kConstantInput: {
        (*env)[spec.value_name] = PlanArgument(spec.arg.is_object() && spec.arg.size() == 1 ? spec.arg : json{{"as_none", true}},
                                               false, "constant input '" + spec.value_name + "'").constant;
        break;
      }
      default:
        throw UnsupportedConstruct("program input '" + spec.value_name + "' is a " + InputKindName(spec.kind) +
                                   (spec.target.empty() ? "" : " ('" + spec.target + "')") +
                                   ": custom objects and tokens are not supported yet by the eager interpreter");
    }
  }
  if (names.size() != user_inputs.size()) {
    throw HarnessError("the program takes " + std::to_string(names.size()) + " user inputs, " +
                       std::to_string(user_inputs.size()) + " were given");
  }
  return names;
}

// CallOperator: the operator on the stack, its returns bound to the node's outputs.
void CallOperator(const Interpreter::Step& step, torch::jit::Stack* stack, Env* env) {
  const Node& node = *step.node;
  try {
    step.op->callBoxed(stack);
  } catch (const c10::Error& e) {
    throw OperatorError(Where(node) + " raised: " + e.what_without_backtrace());
  } catch (const HarnessError&) {
    throw;  // a kernel of the harness's own that names its input
  } catch (const std::exception& e) {
    throw OperatorError(Where(node) + " raised: " + e.what());
  }
  if (node.outputs.size() == stack->size()) {
    for (size_t k = 0; k < stack->size(); ++k) Bind(node.outputs[k], (*stack)[k], node, env);
  } else if (node.outputs.size() == 1 && stack->size() > 1) {
    // Several returns named as one list.
    c10::List<c10::IValue> returns(c10::AnyType::get());
    for (auto& v : *stack) returns.push_back(std::move(v));
    Bind(node.outputs[0], c10::IValue(std::move(returns)), node, env);
  } else if (!node.outputs.empty()) {
    throw HarnessError(Where(node) + ": returned " + std::to_string(stack->size()) + " values, the program names " +
                       std::to_string(node.outputs.size()));
  }
}

// BindResults: a higher-order op's results to the node's outputs (one Argument each, or one
// list of them).
void BindResults(const Node& node, std::vector<c10::IValue> results, Env* env) {
  if (node.outputs.size() == results.size()) {
    for (size_t k = 0; k < results.size(); ++k) Bind(node.outputs[k], results[k], node, env);
    return;
  }
  if (node.outputs.size() == 1) {
    c10::List<c10::IValue> list(c10::AnyType::get());
    for (auto& v : results) list.push_back(std::move(v));
    Bind(node.outputs[0], c10::IValue(std::move(list)), node, env);
    return;
  }
  throw HarnessError(Where(node) + ": returned " + std::to_string(results.size()) + " values, the program names " +
                     std::to_string(node.outputs.size()));
}

// AutocastRegion: autocast on one device type, as torch.autocast sets it, for a
// wrap_with_autocast region; what was set before comes back when it ends.
class AutocastRegion {
 public:
  AutocastRegion(c10::DeviceType device, bool enabled, std::optional<c10::ScalarType> dtype, std::optional<bool> cache)
      : device_(device),
        enabled_(at::autocast::is_autocast_enabled(device)),
        dtype_(at::autocast::get_autocast_dtype(device)),
        cache_(at::autocast::is_autocast_cache_enabled()) {
    at::autocast::set_autocast_enabled(device, enabled);
    if (dtype) at::autocast::set_autocast_dtype(device, *dtype);
    if (cache) at::autocast::set_autocast_cache_enabled(*cache);
    at::autocast::increment_nesting();
  }
  ~AutocastRegion() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(device_, enabled_);
    at::autocast::set_autocast_dtype(device_, dtype_);
    at::autocast::set_autocast_cache_enabled(cache_);
  }
  AutocastRegion(const AutocastRegion&) = delete;
  AutocastRegion& operator=(const AutocastRegion&) = delete;

 private:
  c10::DeviceType device_;
  bool enabled_;
  c10::ScalarType dtype_;
  bool cache_;
};

// Truthy: a predicate as cond and while_loop read it: a one-element bool tensor, a bool, an int.
bool Truthy(const c10::IValue& v, const Node& node) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (t.numel() != 1) {
      throw HarnessError(Where(node) + ": the predicate has " + std::to_string(t.numel()) + " elements, expected one");
    }
    return t.item<bool>();
  }
  if (v.isBool()) return v.toBool();
  if (v.isInt()) return v.toInt() != 0;
  throw HarnessError(Where(node) + ": the predicate is a " + v.tagKind() + ", expected a bool tensor or a bool");
}

// Elements: a list argument's elements (a tensor list, a list of symbolic ints), else the value.
std::vector<c10::IValue> Elements(const c10::IValue& v) {
  if (v.isList()) {
    std::vector<c10::IValue> out;
    for (const auto& e : v.toListRef()) out.push_back(e);
    return out;
  }
  return {v};
}

std::vector<c10::IValue> Concat(std::vector<c10::IValue> a, const std::vector<c10::IValue>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Stacked: per-iteration results stacked along a new first dimension (map_impl's and scan's ys).
std::vector<c10::IValue> Stacked(const std::vector<std::vector<c10::IValue>>& per_step, const Node& node) {
  if (per_step.empty()) {
    throw HarnessError(Where(node) + ": iterates over an empty dimension; the harness cannot infer its outputs");
  }
  std::vector<c10::IValue> out;
  for (size_t k = 0; k < per_step[0].size(); ++k) {
    std::vector<at::Tensor> ts;
    for (const auto& step : per_step) ts.push_back(step.at(k).toTensor());
    out.push_back(at::stack(ts));
  }
  return out;
}

}  // namespace

// One run in progress: what every graph's steps share.
struct Interpreter::Running {
  const RunOptions& options;
  RunResult& result;
  const std::map<std::string, SymRange>& ranges;
  std::map<std::string, std::pair<int64_t, std::string>> symbols;  // unbacked symbol -> value, where bound
  // Symbols bound inside a subgraph, at the first call that bound them: what the run reports
  // for them (RunResult::symbols), once the call that bound them has returned.
  std::map<std::string, int64_t> subgraph_first;
  std::set<std::string> protected_names;  // top-level values kept whatever their last use
};

namespace {

// Check the program's range for a symbol bound now, and bind it (or check it against its
// earlier binding).
void BindSymbol(Interpreter::Running& run, const std::string& symbol, int64_t value, const std::string& where) {
  auto range = run.ranges.find(symbol);
  if (range != run.ranges.end() && (value < range->second.min || value > range->second.max)) {
    throw ProgramConstraintError(
        where + " makes the data-dependent size " + symbol + " = " + std::to_string(value) +
        ", outside the range the program was exported for [" + std::to_string(range->second.min) + ", " +
        (range->second.max == INT64_MAX ? std::string("inf") : std::to_string(range->second.max)) +
        "] (range_constraints): these inputs break the program's own assumptions");
  }
  auto [it, fresh] = run.symbols.emplace(symbol, std::make_pair(value, where));
  if (!fresh && it->second.first != value) {
    throw ProgramConstraintError(where + " makes " + symbol + " = " + std::to_string(value) + ", which " +
                                 it->second.second + " bound to " + std::to_string(it->second.first));
  }
}

}  // namespace

void Interpreter::BindSymbols(const Step& step, const std::unordered_map<std::string, c10::IValue>& env,
                              Running& run) const {
  for (const auto& b : step.binds) {
    auto it = env.find(b.value);
    if (it == env.end()) continue;
    int64_t value = 0;
    if (b.dim < 0) {
      if (!it->second.isInt()) continue;
      value = it->second.toInt();
    } else {
      if (!it->second.isTensor() || it->second.toTensor().dim() <= b.dim) continue;
      value = it->second.toTensor().size(b.dim);
    }
    BindSymbol(run, b.symbol, value, "node '" + step.node->name + "' (" + step.node->target + ")");
  }
}

std::vector<c10::IValue> Interpreter::RunSubgraph(const GraphPlan& plan, const std::vector<c10::IValue>& inputs,
                                                  const Node& caller, Running& run) const {
  const Graph& g = *plan.graph;
  if (inputs.size() != g.inputs.size()) {
    throw HarnessError(Where(caller) + ": subgraph '" + g.name + "' takes " + std::to_string(g.inputs.size()) +
                       " inputs, " + std::to_string(inputs.size()) + " were given");
  }
  Env env;
  for (size_t k = 0; k < inputs.size(); ++k) Bind(g.inputs[k], inputs[k], caller, &env);
  // A data-dependent size made inside a subgraph is the call's own: each call (a loop's
  // iteration, a map's slice, a branch taken) binds it anew, as torch does (a while_loop's
  // body may make a nonzero() of another size in every iteration). Symbols bound outside
  // stay bound, and are checked, inside.
  std::set<std::string> outer;
  for (const auto& bound : run.symbols) outer.insert(bound.first);
  ExecuteGraph(plan, &env, run);
  for (auto it = run.symbols.begin(); it != run.symbols.end();) {
    if (outer.count(it->first)) {
      ++it;
      continue;
    }
    run.subgraph_first.emplace(it->first, it->second.first);
    it = run.symbols.erase(it);
  }
  std::vector<c10::IValue> out;
  for (const auto& o : g.outputs) {
    std::vector<std::string> names;
    ArgumentValueNames(o, &names);
    if (names.size() == 1 && !(o.contains("as_tensors") || o.contains("as_optional_tensors"))) {
      out.push_back(Lookup(env, names[0], caller));
    } else if (o.contains("as_none")) {
      out.push_back(c10::IValue());
    } else {
      out.push_back(PlanArgument(o, false, Where(caller) + " subgraph '" + g.name + "' output").constant);
    }
  }
  return out;
}

void Interpreter::ExecuteHigherOrder(const Step& step, std::vector<c10::IValue> a, const std::string& path,
                                     std::unordered_map<std::string, c10::IValue>* env, Running& run) const {
  const Node& node = *step.node;
  const auto sub = [&](size_t body, const std::vector<c10::IValue>& inputs) {
    return RunSubgraph(*step.bodies.at(body), inputs, node, run);
  };
  auto& seen = run.result.control_flow;
  const bool first = !seen.count(path);
  std::vector<c10::IValue> results;
  if (step.hop == "cond") {
    const int branch = Truthy(a.at(0), node) ? 0 : 1;
    if (first) seen[path].branch = branch;
    results = sub(branch, Elements(a.at(1)));
  } else if (step.hop == "while_loop") {
    std::vector<c10::IValue> carried = Elements(a.at(0));
    const std::vector<c10::IValue> additional = Elements(a.at(1));
    int64_t iterations = 0;
    try {
      while (Truthy(sub(0, Concat(carried, additional)).at(0), node)) {
        carried = sub(1, Concat(carried, additional));
        ++iterations;
        if (options_.deadline.Passed()) StopAtDeadline("after iteration " + std::to_string(iterations) + " of " + Where(node));
      }
    } catch (const RunStopped& e) {
      // The innermost stop names its node; each loop around it adds its iteration.
      if (std::string(e.what()).find(Where(node)) != std::string::npos) throw;
      throw RunStopped(std::string(e.what()) + ", in iteration " + std::to_string(iterations + 1) + " of " + Where(node));
    }
    if (first) seen[path].iterations = iterations;
    results = carried;
  } else if (step.hop == "map_impl") {
    const std::vector<c10::IValue> xs = Elements(a.at(0)), args = Elements(a.at(1));
    const int64_t n = xs.empty() ? 0 : xs[0].toTensor().size(0);
    std::vector<std::vector<c10::IValue>> per_step;
    for (int64_t i = 0; i < n; ++i) {
      std::vector<c10::IValue> slice;
      for (const auto& x : xs) slice.push_back(x.toTensor().select(0, i));
      per_step.push_back(sub(0, Concat(slice, args)));
    }
    if (first) seen[path].iterations = n;
    results = Stacked(per_step, node);
  } else if (step.hop == "scan") {
    std::vector<c10::IValue> carry = Elements(a.at(0));
    const std::vector<c10::IValue> xs = Elements(a.at(1)), additional = Elements(a.at(2));
    const size_t n_carry = carry.size();
    const int64_t n = xs.empty() ? 0 : xs[0].toTensor().size(0);
    std::vector<std::vector<c10::IValue>> ys;
    for (int64_t t = 0; t < n; ++t) {
      std::vector<c10::IValue> x_t;
      for (const auto& x : xs) x_t.push_back(x.toTensor().select(0, t));
      std::vector<c10::IValue> r = sub(0, Concat(Concat(carry, x_t), additional));
      if (r.size() < n_carry) throw HarnessError(Where(node) + ": the combine graph returns fewer values than the carry");
      carry.assign(r.begin(), r.begin() + n_carry);
      ys.emplace_back(r.begin() + n_carry, r.end());
    }
    if (first) seen[path].iterations = n;
    results = carry;
    if (!ys.empty() && !ys[0].empty()) {
      const auto stacked = Stacked(ys, node);
      results.insert(results.end(), stacked.begin(), stacked.end());
    }
  } else if (step.hop == "wrap_with_autocast") {
    // [device_type, dtype, enabled, cache_enabled, operands...]
    const c10::DeviceType device = c10::Device(a.at(0).toStringRef()).type();
    const std::optional<c10::ScalarType> dtype =
        a.at(1).isNone() ? std::nullopt : std::optional<c10::ScalarType>(a.at(1).toScalarType());
    const std::optional<bool> cache = a.at(3).isNone() ? std::nullopt : std::optional<bool>(a.at(3).toBool());
    AutocastRegion region(device, a.at(2).toBool(), dtype, cache);
    results = sub(0, std::vector<c10::IValue>(a.begin() + 4, a.end()));
  } else if (step.hop == "wrap_with_set_grad_enabled") {
    // [enabled, operands...]: the interpreter runs in inference mode, where grad mode
    // changes no value.
    results = sub(0, std::vector<c10::IValue>(a.begin() + 1, a.end()));
  } else {
    throw UnsupportedConstruct(Where(node) + ": the higher-order op '" + step.hop +
                               "' is a construct the harness does not run yet");
  }
  // A higher-order op returns tensors of its own, as torch's do: a loop that ran no
  // iteration, a branch or a region that returns an operand (or a view of one) gives a
  // copy, so that an in-place op after the node never writes the operand (a weight the
  // program holds across runs).
  std::vector<at::Tensor> operands;
  std::function<void(const c10::IValue&)> collect = [&](const c10::IValue& v) {
    if (v.isTensor()) {
      operands.push_back(v.toTensor());
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorVector()) operands.push_back(t);
    } else if (v.isList()) {
      for (const c10::IValue& e : v.toListRef()) collect(e);
    } else if (v.isTuple()) {
      for (const c10::IValue& e : v.toTupleRef().elements()) collect(e);
    }
  };
  for (const c10::IValue& v : a) collect(v);
  for (c10::IValue& r : results) {
    if (!r.isTensor() || !r.toTensor().defined()) continue;
    const at::Tensor t = r.toTensor();
    if (std::any_of(operands.begin(), operands.end(),
                    [&](const at::Tensor& o) { return o.defined() && t.is_alias_of(o); })) {
      r = t.clone();
    }
  }
  BindResults(node, std::move(results), env);
}

void Interpreter::ExecuteGraph(const GraphPlan& plan, std::unordered_map<std::string, c10::IValue>* env,
                               Running& run) const {
  torch::jit::Stack stack;
  for (const auto& step_ptr : plan.steps) {
    const Step& step = *step_ptr;
    const Node& node = *step.node;
    if (step.kind != StepKind::kSkip) {
      if (options_.deadline.Passed()) StopAtDeadline("before " + Where(node));
      stack.clear();
      for (const auto& p : step.args) stack.push_back(Materialize(p, *env, node));
      if (step.kind == StepKind::kOperator) {
        CallOperator(step, &stack, env);
      } else if (step.kind == StepKind::kGetItem) {
        const auto list = stack.at(0).toListRef();
        const int64_t idx = stack.at(1).toInt();
        if (node.outputs.size() == 1) Bind(node.outputs[0], list.at(idx < 0 ? idx + list.size() : idx), node, env);
      } else if (step.kind == StepKind::kHigherOrder) {
        // node.name: its address (a subgraph's nodes are named so).
        ExecuteHigherOrder(step, std::vector<c10::IValue>(stack.begin(), stack.end()), node.name, env, run);
      } else {
        const c10::IValue v = ApplyPythonOp(step.python_op, stack, Where(node));
        if (node.outputs.size() == 1) Bind(node.outputs[0], v, node, env);
      }
      BindSymbols(step, *env, run);
    }
    Observe(plan, node, *env, run);
    run.result.peak_live_values = std::max(run.result.peak_live_values, env->size());
    for (const auto& name : step.free_after) {
      if (!(plan.scope.empty() && run.protected_names.count(name))) env->erase(name);
    }
  }
}

// Observe: the values a step made, to the observer and into the kept intermediates (by
// their address: "relu" at the top, "cond/true_graph_0/relu" inside a subgraph; the first
// time a loop's body makes it).
void Interpreter::Observe(const GraphPlan& plan, const Node& node, const std::unordered_map<std::string, c10::IValue>& env,
                          Running& run) const {
  const RunOptions& options = run.options;
  if (!options.observer && !options.keep_all && options.keep.empty()) return;
  std::vector<std::string> defs;
  for (const auto& out : node.outputs) ArgumentValueNames(out, &defs);
  for (const auto& d : defs) {
    auto it = env.find(d);
    if (it == env.end()) continue;
    const std::string address = plan.scope.empty() ? d : plan.scope + "/" + d;
    if (options.observer) options.observer(node, address, it->second);
    if (options.keep_all || options.keep.count(address)) run.result.intermediates.emplace(address, it->second);
  }
}

namespace {

// CollectOutputs: the user outputs into the result; buffer and parameter mutations into
// the state (in place where they fit, so buffers that share storage see them).
void CollectOutputs(const Program& program, const Env& env, ProgramState* state, RunResult* result) {
  for (const auto& spec : program.output_specs) {
    if (spec.value_name.empty()) {
      result->outputs.push_back(PlanArgument(spec.arg, false, "output").constant);
      continue;
    }
    auto it = env.find(spec.value_name);
    if (it == env.end()) throw HarnessError("program output '" + spec.value_name + "' is never computed");
    switch (spec.kind) {
      case OutputKind::kUserOutput: result->outputs.push_back(it->second); break;
      case OutputKind::kBufferMutation:
      case OutputKind::kParameterMutation: {
        at::Tensor* stored = state->Find(spec.target, /*in_constants=*/false);
        if (stored == nullptr) throw HarnessError("program output mutates '" + spec.target + "', which the program does not lift");
        const at::Tensor value = it->second.toTensor();
        if (stored->defined() && !stored->is_same(value) && stored->sizes() == value.sizes() &&
            stored->scalar_type() == value.scalar_type()) {
          stored->copy_(value);
        } else {
          *stored = value;
        }
        break;
      }
      case OutputKind::kUserInputMutation:
        break;  // the run's copy of the input holds it; the caller's tensors stay as given
      default: break;
    }
  }
}

}  // namespace

Interpreter::~Interpreter() = default;

Interpreter::Interpreter(Program program, ProgramState state, InterpreterOptions options)
    : program_(std::move(program)), state_(std::move(state)), options_(options) {
  if (!options_.device.empty()) {
    // Everything on one device (the float64 reference on the CPU for a device without
    // float64 kernels): weights, constants, inputs, and each device= argument.
    const c10::Device device = ParseDevice(options_.device, "the interpreter's device");
    const std::string why = DeviceUnavailable(device);
    if (!why.empty()) throw HarnessError("the interpreter cannot run on " + device.str() + ": " + why);
    RebaseState(&state_, [&](const at::Tensor& t) { return t.device() != device; },
                [&](const at::Tensor& flat) { return flat.to(device); });
  }
  if (options_.fp64) RebaseState(&state_, PromotedByFp64, [](const at::Tensor& flat) { return Promote(flat); });
  const json& graph_json = program_.document.at("graph_module").at("graph");
  top_ = PlanGraph(nullptr, "", program_.tensor_values, graph_json, program_.nodes, options_);
  std::set<std::string> outputs;
  for (const auto& s : program_.output_specs) {
    if (!s.value_name.empty()) outputs.insert(s.value_name);
  }
  ScheduleFrees(outputs, &top_->steps);
}

// StopAtDeadline: the RunStopped of a run whose deadline has passed, saying where it stopped.
void Interpreter::StopAtDeadline(const std::string& where) const {
  throw RunStopped((options_.fp64 ? "the float64 run" : "the eager run") + std::string(" did not end by ") +
                   options_.deadline.what() + ": stopped " + where);
}

std::unique_ptr<Interpreter> Interpreter::FromArchive(const Pt2Archive& archive, const std::string& model,
                                                      InterpreterOptions options) {
  Program program = Program::Parse(archive.ProgramJson(model), archive.path() + " model '" + model + "'");
  ProgramState state = LoadProgramState(archive, model, options.device);
  return std::make_unique<Interpreter>(std::move(program), std::move(state), options);
}

RunResult Interpreter::Run(const std::vector<at::Tensor>& user_inputs, const RunOptions& options) {
  c10::InferenceMode inference_mode;
  Env env;
  const std::vector<std::string> user_input_names = BindInputs(program_, state_, options_, user_inputs, &env);
  RunResult result;
  Running run{options, result, program_.range_constraints, {}, {}, {}};
  run.protected_names.insert(options.keep.begin(), options.keep.end());
  run.protected_names.insert(user_input_names.begin(), user_input_names.end());
  ExecuteGraph(*top_, &env, run);
  CollectOutputs(program_, env, &state_, &result);
  for (const auto& [symbol, bound] : run.symbols) result.symbols[symbol] = bound.first;
  for (const auto& [symbol, value] : run.subgraph_first) result.symbols.emplace(symbol, value);
  return result;
}

std::vector<at::Tensor> Interpreter::RunTensors(const std::vector<at::Tensor>& user_inputs) {
  RunResult r = Run(user_inputs);
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    if (!r.outputs[i].isTensor()) {
      throw HarnessError("user output " + std::to_string(i) + " is a " + r.outputs[i].tagKind() + ", not a tensor");
    }
    out.push_back(r.outputs[i].toTensor());
  }
  return out;
}

}  // namespace aoti
