// A C++ custom operator for tests: aoti_test::scaled_add(x, y, alpha) = x + alpha * y.
// Registered with TORCH_LIBRARY for CPU, plus a Meta kernel so torch.export can trace it.
// Built twice: as a cc_library linked into C++ tests (the interpreter resolves it through
// the dispatcher) and as a shared library the packaging tool loads into Python.
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty_like.h>
#include <torch/library.h>

namespace {

at::Tensor ScaledAdd(const at::Tensor& x, const at::Tensor& y, double alpha) { return x + y * alpha; }

at::Tensor ScaledAddMeta(const at::Tensor& x, const at::Tensor& y, double alpha) {
  return at::empty_like(x);
}

}  // namespace

TORCH_LIBRARY(aoti_test, m) { m.def("scaled_add(Tensor x, Tensor y, float alpha) -> Tensor"); }

TORCH_LIBRARY_IMPL(aoti_test, CPU, m) { m.impl("scaled_add", &ScaledAdd); }

TORCH_LIBRARY_IMPL(aoti_test, Meta, m) { m.impl("scaled_add", &ScaledAddMeta); }
