// C++ custom operators for tests, registered with TORCH_LIBRARY (CPU + Meta kernels, so
// torch.export can trace them):
//   aoti_test::scaled_add(x, y, alpha) = x + alpha * y     a well-behaved op
//   aoti_test::null_deref(x)                               writes through a null pointer
//                                                          (SIGSEGV) when the environment
//                                                          has AOTI_TEST_NULL_DEREF=1; else
//                                                          returns a copy (so the model can
//                                                          be exported); with
//                                                          AOTI_TEST_HANG=1 it never returns
//                                                          (a hung kernel, for timeouts); with
//                                                          AOTI_TEST_ILLEGAL_INSTRUCTION=1 it
//                                                          executes one (SIGILL); with
//                                                          AOTI_TEST_NAN=1 it returns NaN
//                                                          (a kernel that makes NaN); with
//                                                          AOTI_TEST_FLAKY=1 it returns x + 1
//                                                          on the first, third, ... call (a
//                                                          failure that comes and goes),
//                                                          counted across processes in
//                                                          $TEST_TMPDIR/aoti_test_flaky_calls
//   aoti_test::sized_like(x)                               a copy of x whose meta function is
//                                                          written wrong on purpose: it calls
//                                                          x.sizes(), which symbolic sizes
//                                                          refuse (a dynamic-shape export fails)
// Built twice: as a cc_library linked into C++ tests (the interpreter resolves the ops
// through the dispatcher) and as a shared library loaded into Python for export and into
// the isolated runner.
#include <chrono>
#include <fstream>
#include <limits>
#include <cstdlib>
#include <string>
#include <thread>

#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/full_like.h>
#include <torch/library.h>

namespace {

at::Tensor ScaledAdd(const at::Tensor& x, const at::Tensor& y, double alpha) { return x + y * alpha; }

at::Tensor LikeFirst(const at::Tensor& x) { return at::empty_like(x); }

at::Tensor ScaledAddMeta(const at::Tensor& x, const at::Tensor&, double) { return LikeFirst(x); }

bool Armed(const char* name) {
  const char* v = std::getenv(name);
  return v && std::string(v) == "1";
}

// FlakyCall: this call is an odd one (1st, 3rd, ...) of all the processes' calls, counted
// in a file (under TEST_TMPDIR, else /tmp).
bool FlakyCall() {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir ? dir : "/tmp") + "/aoti_test_flaky_calls";
  long calls = 0;
  {
    std::ifstream in(path);
    in >> calls;
  }
  std::ofstream(path, std::ios::trunc) << calls + 1;
  return calls % 2 == 0;
}

at::Tensor NullDeref(const at::Tensor& x) {
  if (Armed("AOTI_TEST_FLAKY") && FlakyCall()) return x + 1;
  if (Armed("AOTI_TEST_ILLEGAL_INSTRUCTION")) __builtin_trap();  // ud2 on x86-64: SIGILL
  if (Armed("AOTI_TEST_NAN")) return at::full_like(x, std::numeric_limits<double>::quiet_NaN());
  const char* armed = std::getenv("AOTI_TEST_NULL_DEREF");
  if (armed && std::string(armed) == "1") {
    volatile int* null = nullptr;
    *null = 1;  // deliberate: the test that a crashing op is an outcome, not the end
  }
  const char* hang = std::getenv("AOTI_TEST_HANG");
  if (hang && std::string(hang) == "1") {
    while (true) std::this_thread::sleep_for(std::chrono::seconds(60));  // deliberate: a hung op
  }
  return x.clone();
}

at::Tensor SizedLike(const at::Tensor& x) { return x.clone(); }

// Deliberately wrong: a meta function must use x.sym_sizes() (c10::SymInt) to work under
// dynamic shapes; x.sizes() throws on a tensor with symbolic sizes.
at::Tensor SizedLikeMeta(const at::Tensor& x) { return at::empty(x.sizes(), x.options()); }

}  // namespace

TORCH_LIBRARY(aoti_test, m) {
  m.def("scaled_add(Tensor x, Tensor y, float alpha) -> Tensor");
  m.def("null_deref(Tensor x) -> Tensor");
  m.def("sized_like(Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(aoti_test, CPU, m) {
  m.impl("scaled_add", &ScaledAdd);
  m.impl("null_deref", &NullDeref);
  m.impl("sized_like", &SizedLike);
}

TORCH_LIBRARY_IMPL(aoti_test, Meta, m) {
  m.impl("scaled_add", &ScaledAddMeta);
  m.impl("null_deref", &LikeFirst);
  m.impl("sized_like", &SizedLikeMeta);
}
