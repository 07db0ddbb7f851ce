// The model team's own operator, registered with TORCH_LIBRARY: corpus_ops::rms_scale(x, eps)
// = x / sqrt(mean(x^2 over the last dimension) + eps); with CORPUS_OPS_HANG=1 in the
// process' environment it never returns (a hung op: the compiled run is given it through
// --aoti_runner_env, so eager is unaffected). Built as a shared library only
// (libcorpus_ops.so): packaging, the compiled model's runner, the eager interpreter and
// the reducer's compile server all load that one file (op_libraries).
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

at::Tensor RmsScale(const at::Tensor& x, double eps) {
  const char* hang = std::getenv("CORPUS_OPS_HANG");
  if (hang && std::strcmp(hang, "1") == 0) {
    while (true) std::this_thread::sleep_for(std::chrono::seconds(60));  // deliberate: a hung op
  }
  return x * at::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps);
}

at::Tensor RmsScaleMeta(const at::Tensor& x, double) { return at::empty_like(x); }

}  // namespace

TORCH_LIBRARY(corpus_ops, m) { m.def("rms_scale(Tensor x, float eps) -> Tensor"); }

TORCH_LIBRARY_IMPL(corpus_ops, CPU, m) { m.impl("rms_scale", &RmsScale); }

TORCH_LIBRARY_IMPL(corpus_ops, Meta, m) { m.impl("rms_scale", &RmsScaleMeta); }
