#include "harness/check.h"

#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <map>
#include <memory>

#include "harness/errors.h"
#include "harness/interpreter.h"
#include "harness/op_libraries.h"
#include "harness/preflight.h"
#include "harness/pt2_archive.h"
#include "harness/tensor_io.h"

namespace aoti {
namespace {

std::string AbsolutePath(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

CheckReport Fail(CheckReport r, std::string failure_class, std::string message) {
  r.pass = false;
  r.failure_class = std::move(failure_class);
  r.message = std::move(message);
  return r;
}

}  // namespace

CheckReport CheckAotiMatchesEager(const std::string& package, const std::vector<at::Tensor>* given,
                                  const CheckOptions& options) {
  CheckReport r;
  std::string what = package + (options.model.empty() ? "" : " model '" + options.model + "'");
  std::unique_ptr<Pt2Archive> archive;
  std::vector<at::Tensor> inputs;
  std::unique_ptr<Interpreter> eager, fp64;
  std::map<std::string, std::string> metadata;
  try {
    archive = Pt2Archive::Open(package);
    const auto& manifest = archive->Manifest();
    if (manifest && manifest->compile.status == "export_error") {
      // No program to run: torch.export failed when the package was built.
      return Fail(std::move(r), "export error",
                  what + ": torch.export failed when the package was built (" + manifest->compile.error_type + "):\n" +
                      manifest->compile.error_message);
    }
    r.model = archive->ResolveModelName(options.model);
    what = package + " model '" + r.model + "'";
    if (archive->HasCompiledModel(r.model)) metadata = archive->AotiMetadata(r.model);
  } catch (const HarnessError& e) {
    return Fail(std::move(r), "harness error", e.what());
  }
  // 1. Preflight: the package against this host first. A CUDA package on a host without
  // CUDA stops here, before its inputs and weights are placed on a device it lacks.
  std::string device = "cpu";
  if (!metadata.empty()) {
    auto it = metadata.find("AOTI_DEVICE_KEY");
    if (it != metadata.end()) device = it->second;
    const std::vector<std::string> host_problems = CheckPackageAgainstHost(
        metadata, DetectHost(), archive->Manifest() ? archive->Manifest()->cuda_version : "");
    if (!host_problems.empty()) {
      r.preflight_problems = host_problems;
      std::string msg = what + ": preflight found " + std::to_string(host_problems.size()) +
                        " problem(s) with the package on this host (its inputs were not checked):";
      for (const auto& p : host_problems) msg += "\n  " + p;
      return Fail(std::move(r), "preflight", msg);
    }
  }
  try {
    inputs = given ? *given : archive->SampleInputs();
    // Custom operators the program calls: from the test's op libraries unless linked in.
    EnsureOperators(Program::Parse(archive->ProgramJson(r.model), package), options.runner);
    eager = Interpreter::FromArchive(*archive, r.model);
  } catch (const HarnessError& e) {
    return Fail(std::move(r), "harness error", e.what());
  }
  std::vector<std::string> problems = CheckInputs(eager->program(), inputs, device);
  if (!problems.empty()) {
    r.preflight_problems = problems;
    std::string msg = what + ": preflight found " + std::to_string(problems.size()) + " problem(s):";
    for (const auto& p : problems) msg += "\n  " + p;
    return Fail(std::move(r), "preflight", msg);
  }
  // 2. The compiled model.
  r.outcome = RunCompiled(AbsolutePath(package), r.model, inputs, options.runner);
  if (!r.outcome.ok()) {
    std::string msg = what + ": the compiled model failed: " + r.outcome.Summary();
    if (r.outcome.kind == OutcomeKind::kSignal) msg = what + ": " + r.outcome.message;
    std::string cls = OutcomeKindName(r.outcome.kind);
    if (r.outcome.kind == OutcomeKind::kSignal) cls = r.outcome.Summary().substr(0, r.outcome.Summary().find(" ("));
    return Fail(std::move(r), cls, msg);
  }
  // 3. Eager and float64.
  std::vector<at::Tensor> eager_out, fp64_out;
  try {
    eager_out = eager->RunTensors(inputs);
  } catch (const HarnessError& e) {
    return Fail(std::move(r), "harness error", what + ": the eager interpreter failed: " + e.what());
  }
  // Only the float64 RMSE rule needs a float64 run. When it fails, the rule falls back to
  // eager as the reference, as upstream's same_two_models does, and the report says so.
  if (options.accuracy.mode == AccuracyMode::kFp64Rmse) {
    try {
      InterpreterOptions o64;
      o64.fp64 = true;
      // On the package's device where it computes in float64 (the CPU, CUDA), else on the
      // CPU; the report says which.
      const c10::Device run_on = inputs.empty() || !inputs[0].defined() ? c10::Device(c10::kCPU) : inputs[0].device();
      if (!SupportsFloat64(run_on.type())) o64.device = "cpu";
      r.fp64_device = o64.device.empty() ? run_on.str() : o64.device;
      fp64 = Interpreter::FromArchive(*archive, r.model, o64);
      fp64_out = fp64->RunTensors(inputs);
    } catch (const HarnessError& e) {
      fp64_out.clear();
      r.fp64_note = std::string("no float64 reference (the float64 run failed: ") + e.what() +
                    "); judged against eager, as upstream does";
    }
  }
  fp64_out.resize(eager_out.size());  // undefined: no float64 reference for that output
  if (options.keep_values) {
    r.eager_outputs = eager_out;
    r.fp64_outputs = fp64_out;
  }
  // 4. Verdict.
  const auto& got = r.outcome.outputs;
  if (got.size() != eager_out.size()) {
    return Fail(std::move(r), "accuracy", what + ": the compiled model returned " + std::to_string(got.size()) +
                                              " outputs, eager returned " + std::to_string(eager_out.size()));
  }
  const auto sig = eager->program().Signature();
  std::string failures;
  size_t failed = 0;
  const size_t judged = options.judged_outputs ? std::min(options.judged_outputs, got.size()) : got.size();
  for (size_t i = 0; i < judged; ++i) {
    TensorComparison c;
    try {
      c = CompareOutputs(got[i], eager_out[i], fp64_out[i], options.accuracy);
    } catch (const std::exception& e) {  // c10::Error from a comparison op (a bad tolerance, ...)
      return Fail(std::move(r), "harness error",
                  what + ": comparing output " + std::to_string(i) + " failed: " + e.what());
    }
    if (!c.pass) {
      ++failed;
      const std::string name = i < sig.user_outputs.size() ? sig.user_outputs[i] : "?";
      std::string detail = DescribeComparison(c, options.accuracy);
      for (size_t p = detail.find('\n'); p != std::string::npos; p = detail.find('\n', p + 3)) detail.replace(p, 1, "\n  ");
      failures += "\n  output " + std::to_string(i) + " '" + name + "' (" + DescribeTensor(eager_out[i]) +
                  "): " + detail;
    }
    r.comparisons.push_back(std::move(c));
  }
  if (failed) {
    return Fail(std::move(r), "accuracy",
                what + ": " + std::to_string(failed) + " of " + std::to_string(judged) +
                    " outputs differ from eager under " + AccuracyModeName(options.accuracy.mode) + " accuracy" +
                    (r.fp64_device.empty() || r.fp64_device == "cpu" ? "" : " (float64 reference on " + r.fp64_device + ")") +
                    failures +
                    (r.fp64_note.empty() ? "" : "\n  " + r.fp64_note));
  }
  r.pass = true;
  return r;
}

}  // namespace aoti
