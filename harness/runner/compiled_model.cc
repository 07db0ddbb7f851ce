#include "harness/runner/compiled_model.h"

#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/util/Exception.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include "harness/util/stderr_capture.h"

namespace aoti {
CompiledModel::~CompiledModel() = default;

std::unique_ptr<CompiledModel> CompiledModel::Load(const Pt2Archive& archive,
                                                   const std::string& model) {
  archive.RequireModel(model);
  const std::string what = archive.path() + " model '" + model + "'";
  if (!archive.HasCompiledModel(model)) {
    const auto& manifest = archive.Manifest();
    if (manifest && manifest->compile.status == "error") {
      const auto& c = manifest->compile;
      throw AotiCompileError(
          what + ": the AOTI compile failed when the package was built (" + c.error_type + "):\n" +
          (c.compiler_errors.empty() ? c.error_message : c.compiler_errors));
    }
    if (manifest && manifest->compile.status == "skipped") {
      throw HarnessError(what + ": has no compiled model; it was packaged with export_only = True");
    }
    throw HarnessError(what + ": has no compiled model (no data/aotinductor/" + model +
                       "/ in the archive); expected a package from aoti_package or "
                       "aoti_compile_and_package");
  }
  std::unique_ptr<CompiledModel> compiled(new CompiledModel());
  compiled->what_ = what;
  compiled->metadata_ = archive.AotiMetadata(model);
  StderrCapture capture;
  try {
    compiled->loader_ =
        std::make_unique<torch::inductor::AOTIModelPackageLoader>(archive.path(), model);
  } catch (const c10::Error& e) {
    throw AotiLoadError(what + ": libtorch could not load the compiled model: " +
                        e.what_without_backtrace() + "\n" + LastLines(capture.Text(), 20));
  } catch (const std::exception& e) {
    throw AotiLoadError(what + ": libtorch could not load the compiled model: " + e.what() + "\n" +
                        LastLines(capture.Text(), 20));
  }
  return compiled;
}

std::vector<at::Tensor> CompiledModel::Run(const std::vector<at::Tensor>& given) {
  // The inputs on the package's device: a CUDA package given CPU tensors gets them moved
  // to the GPU (the preflight reports such inputs; a caller that skips it still runs).
  auto it = metadata_.find("AOTI_DEVICE_KEY");
  const std::string device = it == metadata_.end() ? "cpu" : it->second;
  std::vector<at::Tensor> inputs = given;
  if (device == "cuda") {
    for (auto& t : inputs) {
      if (t.defined() && !t.is_cuda()) t = t.to(c10::Device(c10::kCUDA));
    }
  }
  StderrCapture capture;
  try {
    std::vector<at::Tensor> out = loader_->run(inputs);
    // CUDA reports a kernel's failure at the next synchronisation: wait here, so the
    // failure is this run's runtime error and not a later, unrelated one.
    if (device == "cuda") at::detail::getCUDAHooks().deviceSynchronize(at::detail::getCUDAHooks().current_device());
    return out;
  } catch (const std::exception& e) {
    const std::string stderr_text = capture.Text();
    const c10::Error* ce = dynamic_cast<const c10::Error*>(&e);
    std::string message = ce ? ce->what_without_backtrace() : e.what();
    throw AotiRunError(what_ + ": the compiled model raised: " + message +
                           (stderr_text.empty() ? "" : "\nstderr:\n" + LastLines(stderr_text, 20)),
                       stderr_text);
  }
}

}  // namespace aoti
