// aoti_runner: the child process of CompiledRunner. Loads a package's AOTI-compiled
// model, runs it on a tensor bundle, writes the outputs as a tensor bundle, and writes
// result.json {"status": ..., "message": ...}. A crash in the model kills only this
// process; the parent reads the signal from its exit status.
//
//   aoti_runner --package P --model NAME --inputs DIR --outputs DIR [--op_library SO]... [--seed N]
//
// With --seed, ATen's generator is seeded before the run (a model compiled with
// fallback_random=True then draws what a seeded eager run draws).
//
// It also tells which operator namespaces a library of custom operators registers, by
// loading it here, where no test has linked it (result.json "namespaces"):
//
//   aoti_runner --namespaces_of SO --outputs DIR
#include <cstdio>
#include <dlfcn.h>

#include <cstring>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <nlohmann/json.hpp>

#include "harness/runner/compiled_model.h"
#include "harness/util/errors.h"
#include "harness/archive/pt2_archive.h"
#include "harness/archive/tensor_bundle.h"

namespace {

int Usage(const std::string& problem) {
  std::cerr << "aoti_runner: " << problem
            << "\nusage: aoti_runner --package P --model NAME --inputs DIR --outputs DIR [--op_library SO]... [--seed N]\n"
            << "       aoti_runner --namespaces_of SO --outputs DIR\n";
  return 64;
}

std::set<std::string> OperatorNames() {
  std::set<std::string> names;
  for (const auto& op : c10::Dispatcher::singleton().getAllOpNames()) names.insert(op.name);
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  // Line-buffered: what the compiled model prints (AOTI's kernel-name printer among it)
  // reaches the log even when the model then dies of a signal.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string package, model = "model", inputs, outputs, namespaces_of, seed;
  std::vector<std::string> libraries;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return Usage("missing value after " + arg);
    const std::string value = argv[++i];
    if (arg == "--package") package = value;
    else if (arg == "--model") model = value;
    else if (arg == "--inputs") inputs = value;
    else if (arg == "--outputs") outputs = value;
    else if (arg == "--op_library") libraries.push_back(value);
    else if (arg == "--namespaces_of") namespaces_of = value;
    else if (arg == "--seed") seed = value;
    else return Usage("unknown argument " + arg);
  }
  if (!namespaces_of.empty() && outputs.empty()) return Usage("--namespaces_of needs --outputs");
  if (namespaces_of.empty() && (package.empty() || inputs.empty() || outputs.empty())) {
    return Usage("--package, --inputs and --outputs are required");
  }
  nlohmann::json result;
  auto finish = [&](const std::string& status, const std::string& message) {
    result["status"] = status;
    result["message"] = message;
    try {
      aoti::WriteTextFile(outputs + "/result.json", result.dump());
    } catch (const std::exception& e) {
      std::cerr << "aoti_runner: " << e.what() << "\n";
      return 70;
    }
    return status == "ok" ? 0 : 2;
  };
  if (!namespaces_of.empty()) {
    // The namespaces of the operators the library adds (TORCH_LIBRARY, and fragments).
    const std::set<std::string> before = OperatorNames();
    if (::dlopen(namespaces_of.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      return finish("harness_error", "cannot load operator library " + namespaces_of + ": " + ::dlerror());
    }
    std::set<std::string> namespaces;
    for (const auto& name : OperatorNames()) {
      const size_t sep = name.find("::");
      if (!before.count(name) && sep != std::string::npos) namespaces.insert(name.substr(0, sep));
    }
    result["namespaces"] = std::vector<std::string>(namespaces.begin(), namespaces.end());
    return finish("ok", "");
  }
  for (const auto& lib : libraries) {
    if (::dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      return finish("harness_error", "cannot load operator library " + lib + ": " + ::dlerror());
    }
  }
  try {
    auto archive = aoti::Pt2Archive::Open(package);
    auto compiled = aoti::CompiledModel::Load(*archive, model);
    const auto in = aoti::ReadTensorBundle(inputs);
    if (!seed.empty()) at::manual_seed(std::stoull(seed));
    const auto out = compiled->Run(in);
    aoti::WriteTensorBundle(outputs, out);
    return finish("ok", "");
  } catch (const aoti::AotiCompileError& e) {
    return finish("compile_error", e.what());
  } catch (const aoti::AotiLoadError& e) {
    return finish("load_error", e.what());
  } catch (const aoti::AotiRunError& e) {
    return finish("runtime_error", e.what());
  } catch (const aoti::HarnessError& e) {
    return finish("harness_error", e.what());
  } catch (const std::exception& e) {
    return finish("runtime_error", std::string("uncaught exception: ") + e.what());
  }
}
