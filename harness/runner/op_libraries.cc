#include "harness/runner/op_libraries.h"

#include <dlfcn.h>
#include <sys/wait.h>

#include <cstring>
#include <mutex>
#include <set>

#include <ATen/core/dispatch/Dispatcher.h>
#include <glog/logging.h>
#include <nlohmann/json.hpp>

#include "harness/util/errors.h"
#include "harness/util/stderr_capture.h"
#include "harness/util/subprocess.h"
#include "harness/util/temp_dir.h"
#include "harness/archive/tensor_bundle.h"

namespace aoti {
namespace {

std::mutex& LoadMutex() {
  static std::mutex m;
  return m;
}

// The libraries this process has dealt with: loaded, or found linked in already.
std::set<std::string>& Handled() {
  static auto* handled = new std::set<std::string>();
  return *handled;
}

bool Registered(const std::string& name, const std::string& overload) {
  return c10::Dispatcher::singleton().findSchema({name, overload}).has_value();
}

std::set<std::string> RegisteredNamespaces() {
  std::set<std::string> out;
  for (const auto& op : c10::Dispatcher::singleton().getAllOpNames()) {
    const size_t sep = op.name.find("::");
    if (sep != std::string::npos) out.insert(op.name.substr(0, sep));
  }
  return out;
}

// NamespacesOf: the operator namespaces `library` registers, as the runner found by
// loading it in a child process.
std::vector<std::string> NamespacesOf(const std::string& library, const RunnerOptions& runner) {
  const std::string binary = FindRunner(runner);
  TempDir work("aoti_op_library_probe");
  const std::string log = work.path() + "/probe.log";
  int status = 0;
  const bool ended = RunLogged({binary, "--namespaces_of", library, "--outputs", work.path()},
                               ChildEnvironment({runner.env_pass_through, runner.env}), log, 120, &status);
  const std::string what = "op library " + library;
  if (!ended) throw HarnessError(what + ": loading it in the runner took more than 120 s");
  nlohmann::json result;
  try {
    result = nlohmann::json::parse(ReadTextFile(work.path() + "/result.json"));
  } catch (const std::exception&) {
    throw HarnessError(what + ": the runner could not load it (" +
                       (WIFSIGNALED(status) ? "killed by " + SignalName(WTERMSIG(status))
                                            : "exit status " + std::to_string(WEXITSTATUS(status))) +
                       "):\n" + LastLines(ReadTextFile(log), 10));
  }
  if (result.value("status", "") != "ok") throw HarnessError(what + ": " + result.value("message", "cannot be loaded"));
  return result.value("namespaces", std::vector<std::string>{});
}

// Bare: an operator's name without its overload ("ns::op.default" -> "ns::op").
std::string Bare(const std::string& op) {
  const size_t sep = op.find("::");
  const size_t dot = op.find('.', sep == std::string::npos ? 0 : sep);
  return dot == std::string::npos ? op : op.substr(0, dot);
}

}  // namespace

std::string PythonOnlyMessage(const std::vector<PythonOp>& ops) {
  std::string names;
  bool calls_back = false, transformers = false;
  for (const auto& op : ops) {
    names += (names.empty() ? "'" : ", '") + op.op + "' (" + std::to_string(op.nodes) +
             (op.nodes == 1 ? " node" : " nodes") + "; Python defines it at " + op.defined_at +
             (op.module.empty() ? "" : ", module " + op.module) + ")";
    calls_back = calls_back || op.compiled_calls.value_or(false);
    transformers = transformers || op.op.rfind("transformers::", 0) == 0;
  }
  const bool one = ops.size() == 1;
  std::string m = "the program calls " + std::string(one ? "an operator" : "operators") + " written only in Python: " +
                  names + ". " + (one ? "It has" : "They have") +
                  " no C++ kernel, so no C++ process can run " + (one ? "it" : "them") + ": " +
                  (calls_back ? "the compiled model calls " + std::string(one ? "it" : "them") +
                                    " back into Python (AOTI's proxy executor), so a C++ deployment of this package "
                                    "fails at that call, and so do the harness's runner and eager interpreter"
                              : "not a C++ deployment, not the harness's runner or eager interpreter") +
                  ". Fixes: export the model with an implementation made of ATen operators or C++ kernels";
  if (transformers) {
    m += " (transformers: experts_implementation=\"batched_mm\" on the model's config instead of the default "
         "grouped_mm)";
  }
  m += "; or register a C++ kernel under the same schema (TORCH_LIBRARY_IMPL) in a shared library and give it as "
       "op_libraries (aoti_model_test, aoti_package)";
  return m;
}

void EnsureOperators(const Program& program, const RunnerOptions& runner, const std::vector<PythonOp>& python_ops) {
  auto missing = [&] {
    std::set<std::string> out;
    // Inside subgraphs too; a higher-order op itself is no library's operator.
    ForEachNode(program.nodes, [&](const Node& node, const std::string&) {
      std::string name, overload;
      if (HigherOrderName(node).empty() && ParseTarget(node.target, &name, &overload) && !Registered(name, overload)) {
        out.insert(name + (overload.empty() ? "" : "." + overload));
      }
    });
    return out;
  };
  if (missing().empty()) return;
  std::lock_guard<std::mutex> lock(LoadMutex());
  for (const auto& library : runner.op_libraries) {
    if (Handled().count(library) || missing().empty()) continue;
    const std::set<std::string> here = RegisteredNamespaces();
    std::string linked;
    for (const auto& ns : NamespacesOf(library, runner)) {
      if (here.count(ns)) linked += (linked.empty() ? "" : ", ") + ns;
    }
    Handled().insert(library);
    if (!linked.empty()) {
      // Linked into this binary already: a second registration would abort the process.
      LOG(INFO) << "op library " << library << " registers " << linked << ", which this process has already; "
                << "not loading it again";
      continue;
    }
    if (::dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      throw HarnessError("op library " + library + ": cannot be loaded: " + ::dlerror());
    }
    LOG(INFO) << "loaded op library " << library;
  }
  const std::set<std::string> still = missing();
  if (still.empty()) return;
  // Operators PyTorch defines in Python only: no shared library has them. The harness runs
  // quantized_decomposed's natively (harness/program/quantized_ops.cc); the rest of that
  // namespace is a construct it does not run yet.
  for (const auto& op : still) {
    if (op.rfind("quantized_decomposed::", 0) == 0) {
      throw UnsupportedConstruct("operator '" + op + "' (defined by PyTorch in Python only, "
                                 "torch/ao/quantization/fx/_decomposed.py) does not run yet in the harness's "
                                 "interpreter; it runs quantize/dequantize per tensor, per channel and per token, and "
                                 "choose_qparams (docs/not_done.md)");
    }
  }
  // Operators a Python file defines (the package's record): no library is what is missing.
  std::vector<PythonOp> in_python;
  for (const auto& op : python_ops) {
    for (const auto& missing_op : still) {
      if (Bare(missing_op) == Bare(op.op)) {
        in_python.push_back(op);
        break;
      }
    }
  }
  if (!in_python.empty()) throw PythonOnlyOperator(PythonOnlyMessage(in_python));
  std::string ops, libraries;
  for (const auto& op : still) ops += (ops.empty() ? "'" : ", '") + op + "'";
  for (const auto& l : runner.op_libraries) libraries += (libraries.empty() ? "" : ", ") + l;
  throw HarnessError("operator" + std::string(still.size() > 1 ? "s " : " ") + ops + " " +
                     (still.size() > 1 ? "are" : "is") + " not registered; " +
                     (libraries.empty() ? std::string("give the shared library that defines it (TORCH_LIBRARY) as "
                                                      "op_libraries (aoti_model_test, --aoti_op_libraries), or link it "
                                                      "into the test")
                                        : "none of the op libraries (" + libraries + ") defines it"));
}

}  // namespace aoti
