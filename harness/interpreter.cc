#include "harness/interpreter.h"

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
#include <ATen/ops/empty.h>
#include <ATen/core/stack.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/Exception.h>

#include "harness/errors.h"
#include "harness/json_util.h"
#include "harness/tensor_io.h"

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
enum class StepKind { kOperator, kGetItem, kPythonOp, kSkip };

bool IsFloating(c10::ScalarType t) { return c10::isFloatingType(t); }

std::string Where(const Node& node) { return "node '" + node.name + "' (" + node.target + ")"; }

}  // namespace

struct Interpreter::Step {
  const Node* node = nullptr;
  StepKind kind = StepKind::kOperator;
  std::optional<c10::OperatorHandle> op;
  std::vector<ArgPlan> args;
  std::string python_op;               // for kPythonOp: "add", "mul", ...
  std::vector<std::string> free_after; // values whose last use is this step
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

const std::set<std::string>& PythonOps() {
  static const auto* ops = new std::set<std::string>{
      "add", "sub", "mul", "floordiv", "truediv", "mod", "neg", "pos", "pow", "trunc",
      "eq", "ne", "lt", "le", "gt", "ge", "and_", "or_", "not_", "lshift", "rshift",
      // torch's symbolic helpers (targets torch.sym_max, ...), as the serializer knows them
      "sym_max", "sym_min", "sym_not", "sym_ite", "sym_float", "sym_int", "_sym_sqrt"};
  return *ops;
}

c10::IValue ApplyPythonOp(const std::string& op, const std::vector<c10::IValue>& a, const Node& node) {
  auto num = [](const c10::IValue& v) { return v.isInt() ? static_cast<double>(v.toInt()) : v.isBool() ? v.toBool() : v.toDouble(); };
  const bool ints = std::all_of(a.begin(), a.end(), [](const c10::IValue& v) { return v.isInt() || v.isBool(); });
  auto as_int = [](const c10::IValue& v) { return v.isInt() ? v.toInt() : static_cast<int64_t>(v.toBool()); };
  auto truthy = [&](const c10::IValue& v) { return v.isBool() ? v.toBool() : num(v) != 0; };
  if (op == "neg") return ints ? c10::IValue(-as_int(a.at(0))) : c10::IValue(-num(a.at(0)));
  if (op == "pos") return a.at(0);
  if (op == "not_" || op == "sym_not") return c10::IValue(!truthy(a.at(0)));
  if (op == "trunc" || op == "sym_int") return c10::IValue(static_cast<int64_t>(std::trunc(num(a.at(0)))));
  if (op == "sym_float") return c10::IValue(num(a.at(0)));
  if (op == "_sym_sqrt") return c10::IValue(std::sqrt(num(a.at(0))));
  if (op == "sym_ite") {
    if (a.size() != 3) throw HarnessError(Where(node) + ": sym_ite expects 3 operands, got " + std::to_string(a.size()));
    return truthy(a[0]) ? a[1] : a[2];
  }
  if (a.size() != 2) throw HarnessError(Where(node) + ": expected 2 operands, got " + std::to_string(a.size()));
  const double x = num(a[0]), y = num(a[1]);
  if (op == "add") return ints ? c10::IValue(as_int(a[0]) + as_int(a[1])) : c10::IValue(x + y);
  if (op == "sub") return ints ? c10::IValue(as_int(a[0]) - as_int(a[1])) : c10::IValue(x - y);
  if (op == "mul") return ints ? c10::IValue(as_int(a[0]) * as_int(a[1])) : c10::IValue(x * y);
  if (op == "truediv") return c10::IValue(x / y);
  if (op == "floordiv" || op == "mod") {
    if (ints) {
      const int64_t p = as_int(a[0]), q = as_int(a[1]);
      if (q == 0) throw HarnessError(Where(node) + ": integer division by zero");
      int64_t d = p / q;
      if ((p % q != 0) && ((p < 0) != (q < 0))) --d;  // Python floors
      return op == "floordiv" ? c10::IValue(d) : c10::IValue(p - d * q);
    }
    const double d = std::floor(x / y);
    return op == "floordiv" ? c10::IValue(d) : c10::IValue(x - d * y);
  }
  if (op == "pow") return ints && as_int(a[1]) >= 0 ? c10::IValue(static_cast<int64_t>(std::llround(std::pow(x, y)))) : c10::IValue(std::pow(x, y));
  if (op == "eq") return c10::IValue(x == y);
  if (op == "ne") return c10::IValue(x != y);
  if (op == "lt") return c10::IValue(x < y);
  if (op == "le") return c10::IValue(x <= y);
  if (op == "gt") return c10::IValue(x > y);
  if (op == "ge") return c10::IValue(x >= y);
  const bool bools = a[0].isBool() && a[1].isBool();  // SymBool & SymBool is a bool
  if (op == "and_") return bools ? c10::IValue(a[0].toBool() && a[1].toBool()) : c10::IValue(as_int(a[0]) & as_int(a[1]));
  if (op == "or_") return bools ? c10::IValue(a[0].toBool() || a[1].toBool()) : c10::IValue(as_int(a[0]) | as_int(a[1]));
  if (op == "lshift") return c10::IValue(as_int(a[0]) << as_int(a[1]));
  if (op == "rshift") return c10::IValue(as_int(a[0]) >> as_int(a[1]));
  if (op == "sym_max") return ints ? c10::IValue(std::max(as_int(a[0]), as_int(a[1]))) : c10::IValue(std::max(x, y));
  if (op == "sym_min") return ints ? c10::IValue(std::min(as_int(a[0]), as_int(a[1]))) : c10::IValue(std::min(x, y));
  throw HarnessError(Where(node) + ": Python operator '" + op + "' is not supported");
}

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

// PromotesDtype: in float64 mode, does this argument's dtype become float64? As upstream's
// cast_dtype_args_to_fp64: the dtype of prims.convert_element_type, and dtype= keyword
// arguments; a positional dtype (aten.to.dtype's, the bitcast of aten.view.dtype) stays.
bool PromotesDtype(const c10::FunctionSchema& schema, const NamedArgument& arg) {
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

// PlanStep: a node resolved once: getitem, a Python operator, or an operator call.
std::unique_ptr<Interpreter::Step> PlanStep(const Node& node, const InterpreterOptions& options) {
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
        throw HarnessError(what + ": the Python operator '" + node.target + "' is not supported by the interpreter");
      }
      step->kind = StepKind::kPythonOp;
      for (const auto& a : node.inputs) step->args.push_back(PlanArgument(a.arg, false, what));
    } else if (node.target.rfind("torch.ops.higher_order.", 0) == 0) {
      throw HarnessError(what + ": higher-order op '" + node.target + "' is not supported by the interpreter yet");
    } else if (ParseTarget(node.target, &name, &overload)) {
      PlanOperator(node, name, overload, options, what, step.get());
    } else {
      throw HarnessError(what + ": target '" + node.target + "' is not an operator the interpreter knows");
    }
  } catch (const json::exception& e) {
    throw HarnessError(what + ": malformed argument: " + e.what());
  }
  return step;
}

// ScheduleFrees: each value is freed after the step that reads it last (a value never
// read, at once); the program's outputs are kept.
void ScheduleFrees(const Program& program, std::vector<std::unique_ptr<Interpreter::Step>>* steps) {
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
  std::set<std::string> outputs;
  for (const auto& s : program.output_specs) if (!s.value_name.empty()) outputs.insert(s.value_name);
  for (const auto& [name, step] : last_use) {
    if (!outputs.count(name)) (*steps)[step]->free_after.push_back(name);
  }
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
        throw HarnessError("program input '" + spec.value_name + "' is a " + InputKindName(spec.kind) +
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
    throw HarnessError(Where(node) + " raised: " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw HarnessError(Where(node) + " raised: " + e.what());
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

void ExecuteStep(const Interpreter::Step& step, torch::jit::Stack* stack, Env* env) {
  if (step.kind == StepKind::kSkip) return;
  const Node& node = *step.node;
  stack->clear();
  for (const auto& p : step.args) stack->push_back(Materialize(p, *env, node));
  if (step.kind == StepKind::kOperator) {
    CallOperator(step, stack, env);
  } else if (step.kind == StepKind::kGetItem) {
    const auto list = stack->at(0).toListRef();
    const int64_t idx = stack->at(1).toInt();
    if (node.outputs.size() == 1) Bind(node.outputs[0], list.at(idx < 0 ? idx + list.size() : idx), node, env);
  } else {
    const c10::IValue v = ApplyPythonOp(step.python_op, *stack, node);
    if (node.outputs.size() == 1) Bind(node.outputs[0], v, node, env);
  }
}

// Observe: the values a step made, to the observer and into the kept intermediates.
void Observe(const Node& node, const Env& env, const RunOptions& options, RunResult* result) {
  if (!options.observer && !options.keep_all && options.keep.empty()) return;
  std::vector<std::string> defs;
  for (const auto& out : node.outputs) ArgumentValueNames(out, &defs);
  for (const auto& d : defs) {
    auto it = env.find(d);
    if (it == env.end()) continue;
    if (options.observer) options.observer(node, d, it->second);
    if (options.keep_all || options.keep.count(d)) result->intermediates[d] = it->second;
  }
}

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
  for (const Node& node : program_.nodes) steps_.push_back(PlanStep(node, options_));
  ScheduleFrees(program_, &steps_);
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
  std::set<std::string> protected_names(options.keep);
  protected_names.insert(user_input_names.begin(), user_input_names.end());
  torch::jit::Stack stack;
  for (const auto& step : steps_) {
    ExecuteStep(*step, &stack, &env);
    Observe(*step->node, env, options, &result);
    result.peak_live_values = std::max(result.peak_live_values, env.size());
    for (const auto& name : step->free_after) {
      if (!protected_names.count(name)) env.erase(name);
    }
  }
  CollectOutputs(program_, env, &state_, &result);
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
