// The eager interpreter on programs that parse but are wrong: a program JSON (seeded from
// the corpus, mutated by libFuzzer) is parsed, given small tensors made from its own
// tensor metadata for every input, parameter, buffer and constant, and run natively and
// in float64. A program may be refused by any exception (CheckAotiMatchesEager turns each
// into a failing check with its message); a crash, an abort, a leak or undefined
// behaviour is a bug.
#include <exception>
#include <map>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "fuzz/fuzz_util.h"
#include "harness/program/interpreter.h"
#include "harness/program/program.h"
#include "harness/program/program_state.h"

namespace {

constexpr int64_t kMaxElements = 4096;

// A small, deterministic tensor for `meta`; false when it has no dtype or is too large.
bool MakeTensor(const aoti::TensorMeta& meta, const std::map<std::string, aoti::SymRange>& ranges, at::Tensor* out) {
  if (meta.dtype == c10::ScalarType::Undefined || meta.sizes.size() > 6) return false;
  std::vector<int64_t> sizes;
  int64_t numel = 1;
  for (const auto& d : meta.sizes) {
    int64_t n = d.size;
    if (d.is_symbolic()) {
      auto r = ranges.find(d.sym);
      n = r == ranges.end() ? 2 : std::max<int64_t>(r->second.min, 0);
    }
    if (n < 0 || n > kMaxElements) return false;
    numel *= n;
    if (numel > kMaxElements) return false;
    sizes.push_back(n);
  }
  if (c10::isComplexType(meta.dtype) || c10::isQIntType(meta.dtype) || c10::isBitsType(meta.dtype) ||
      meta.dtype == c10::ScalarType::QUInt4x2 || meta.dtype == c10::ScalarType::QUInt2x4) {
    return false;
  }
  // Values -3 .. 3, the same for every run of the same input.
  at::Tensor t = at::arange(numel, at::kDouble).remainder(7).sub(3).reshape(sizes);
  *out = meta.dtype == c10::ScalarType::Bool ? t.gt(0) : t.to(meta.dtype);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  aoti::Program program;
  try {
    program = aoti::Program::Parse(aoti::AsString(data, size), "fuzz.json");
  } catch (const aoti::HarnessError&) {
    return 0;
  }
  aoti::ProgramState state;
  std::vector<at::Tensor> inputs;
  for (const auto& spec : program.input_specs) {
    if (spec.kind == aoti::InputKind::kConstantInput || spec.kind == aoti::InputKind::kToken ||
        spec.kind == aoti::InputKind::kCustomObj) {
      continue;
    }
    auto meta = program.tensor_values.find(spec.value_name);
    at::Tensor t;
    if (meta == program.tensor_values.end() || !MakeTensor(meta->second, program.range_constraints, &t)) {
      if (spec.kind == aoti::InputKind::kUserInput) return 0;  // no input to give it
      continue;  // a missing weight: the interpreter must say so
    }
    if (spec.kind == aoti::InputKind::kUserInput) {
      inputs.push_back(t);
    } else if (spec.StoredWithConstants()) {
      state.constants[spec.target] = t;
    } else {
      state.weights[spec.target] = t;
    }
  }
  for (const bool fp64 : {false, true}) {
    try {
      aoti::InterpreterOptions options;
      options.fp64 = fp64;
      aoti::Interpreter interpreter(program, state, options);
      (void)interpreter.Run(inputs);
    } catch (const std::exception&) {
      // Refused: a HarnessError naming what is wrong, or an operator's own error.
    }
  }
  return 0;
}
