#include "harness/triage/triage.h"
#include "harness/util/failure_class.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include <ATen/core/Tensor.h>

#include "harness/runner/compiled_runner.h"
#include "harness/util/errors.h"
#include "harness/archive/pt2_archive.h"
#include "harness/archive/tensor_io.h"
#include "harness/util/strings.h"

namespace aoti {
namespace {

std::string AllText(const TriageEvidence& e) { return e.message + "\n" + e.stderr_text; }

// The last `n` non-empty lines of a text, joined with " / ".
std::string TailLines(const std::string& text, size_t n) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t") != std::string::npos) lines.push_back(line);
  }
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) out += (out.empty() ? "" : " / ") + lines[i];
  return out;
}

std::string Get(const std::map<std::string, std::string>& m, const char* key) {
  auto it = m.find(key);
  return it == m.end() ? "" : it->second;
}

std::vector<std::string> ProblemsStartingWith(const TriageEvidence& e, const std::vector<std::string>& prefixes) {
  std::vector<std::string> out;
  for (const auto& p : e.preflight_problems) {
    for (const auto& prefix : prefixes) {
      if (p.rfind(prefix, 0) == 0) {
        out.push_back(p);
        break;
      }
    }
  }
  return out;
}

std::vector<std::string> InputProblems(const TriageEvidence& e, const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (const auto& p : e.preflight_problems) {
    if (p.rfind("inputs:", 0) == 0 && std::find(words.begin(), words.end(), "count") != words.end()) {
      out.push_back(p);
      continue;
    }
    if (p.rfind("input ", 0) != 0 && p.rfind("kwarg ", 0) != 0) continue;
    for (const auto& w : words) {
      if (Contains(p, w)) {
        out.push_back(p);
        break;
      }
    }
  }
  return out;
}

std::string HostIsa(const HostInfo& h) {
  std::string flags;
  for (const char* f : {"avx2", "avx512f", "avx512bw", "avx512vl", "avx512_bf16", "amx_tile", "asimd", "sve"}) {
    if (h.cpu_flags.count(f)) flags += (flags.empty() ? "" : " ") + std::string(f);
  }
  return flags.empty() ? "none of avx2/avx512/amx" : flags;
}

// ReduceStep: the next step that reduces the failure, or, when the reduction already
// follows this test (DUMP_AOTI_MINIFIER=1), where its repro lands.
std::string ReduceStep(const TriageEvidence& e) {
  if (e.reducing) return "The reduction runs when this test ends (DUMP_AOTI_MINIFIER=1): its repro lands in the test's outputs";
  return "$ DUMP_AOTI_MINIFIER=1 bazel test <this test>   # the harness reduces the failure to the culprit node; the "
         "repro lands in the test's outputs (bazel-testlogs/<test>/test.outputs/)";
}

std::optional<Diagnosis> DeprecatedApi(const TriageEvidence& e) {
  const bool uses_aot_load = Contains(e.message, "aot_load(") || Contains(e.message, "torch._export.aot_compile") ||
                             Contains(e.message, "torch._export.aot_load");
  if (!e.package_is_shared_object && !uses_aot_load) return std::nullopt;
  Diagnosis d;
  if (e.package_is_shared_object) {
    d.evidence.push_back(e.package + " is a bare shared object (an ELF file), not a .pt2 package: the output of the "
                         "deprecated torch._export.aot_compile");
  } else {
    d.evidence.push_back("the failure names the deprecated aot_compile / aot_load API");
  }
  d.evidence.push_back("a bare .so carries no device, no sample inputs and no program: it cannot be checked against "
                       "eager, and it loads only with torch._export.aot_load");
  d.next_steps = {
      "Package the model with the current API, which records the device and the program in the package:",
      "$ python -c \"import torch; ep = torch.export.export(model, example_inputs); "
      "torch._inductor.aoti_compile_and_package(ep, package_path='model.pt2')\"",
      "Load it with torch._inductor.aoti_load_package('model.pt2') in Python, or "
      "torch::inductor::AOTIModelPackageLoader in C++, instead of torch._export.aot_load.",
      "In a model repository: aoti_package(name = \"model\", model = \"model.py\") builds model.pt2, and "
      "aoti_model_test(package = \":model\") checks it."};
  return d;
}

std::optional<Diagnosis> DeviceMismatch(const TriageEvidence& e) {
  std::vector<std::string> found = ProblemsStartingWith(e, {"device:", "the package's AOTI metadata has no AOTI_DEVICE_KEY"});
  for (const auto& p : InputProblems(e, {"(the package's device)"})) found.push_back(p);
  if (found.empty() && Contains(AllText(e), "unmatched device type")) found.push_back(TailLines(e.stderr_text, 2));
  if (found.empty()) return std::nullopt;
  Diagnosis d;
  const std::string device = Get(e.metadata, "AOTI_DEVICE_KEY");
  d.evidence = found;
  d.evidence.push_back("the package was compiled for " + (device.empty() ? std::string("an unknown device") : device) +
                       "; this host " + (e.host.has_cuda ? "has" : "has no") + " CUDA device");
  d.next_steps = {
      "AOTI loads a package only on the device type it was compiled for (cpu on cpu, cuda on cuda); only the "
      "device index may differ (cuda:0 vs cuda:1).",
      "Compile the package on (or for) the device it will run on: aoti_package builds for the device its model and "
      "inputs are on.",
      "Give the inputs on the package's device: inputs[i] = inputs[i].to(<the package's device>)."};
  return d;
}

std::optional<Diagnosis> CpuIsa(const TriageEvidence& e) {
  const auto refused = ProblemsStartingWith(e, {"CPU ISA:"});
  if (refused.empty() && !(e.failure_class == "signal SIGILL" || e.signal == 4)) return std::nullopt;
  Diagnosis d;
  const std::string isa = Get(e.metadata, "AOTI_CPU_ISA");
  d.evidence = refused;
  if (e.signal == 4 || e.failure_class == "signal SIGILL") {
    d.evidence.push_back("the compiled run died of SIGILL (an illegal instruction)");
  }
  d.evidence.push_back("the package's kernels were compiled for " + (isa.empty() ? std::string("an unrecorded ISA") : isa) +
                       "; this host has " + HostIsa(e.host));
  if (refused.empty() && !isa.empty()) {
    d.evidence.push_back("the preflight found the package's ISA supported here, so the illegal instruction comes from "
                         "code outside the generated kernels" +
                         (e.op_libraries.empty() ? std::string(" (a library built for another CPU)")
                                                 : ": a custom-op library is loaded (" + e.op_libraries.front() + ")"));
  }
  d.next_steps = {
      "A package compiled on a machine with wider vector units (AVX-512, AMX) dies of SIGILL on a narrower one: build "
      "it on the machine class it runs on, or pin the ISA when compiling, e.g. inductor_configs = "
      "{\"cpp.simdlen\": \"256\"} for AVX2.",
      "For a custom-op library, check the -march/-mavx flags it was built with against this CPU (grep flags "
      "/proc/cpuinfo).",
      "$ gdb -batch -ex run -ex bt --args <the test binary> --aoti_isolation=in_process   # the faulting instruction"};
  return d;
}

std::optional<Diagnosis> ShapeDtype(const TriageEvidence& e) {
  const auto found = InputProblems(e, {"has dtype", "has shape", "dim ", "strides", "is not contiguous", "count"});
  if (found.empty()) return std::nullopt;
  Diagnosis d;
  d.evidence = found;
  for (size_t i = 0; i < e.inputs.size() && i < 8; ++i) d.evidence.push_back("given input " + std::to_string(i) + ": " + e.inputs[i]);
  d.next_steps = {"Give inputs of the dtypes and shapes the package was compiled for (the preflight lines above say "
                  "which); aoti::SampleInputs(package) are such inputs, to start from.",
                  "For a dimension that must vary, export it as dynamic (dynamic_shapes() in the model file, "
                  "torch.export.Dim(\"batch\", min=..., max=...)) with a range that covers the sizes you run."};
  if (std::any_of(found.begin(), found.end(), [](const std::string& p) { return Contains(p, "outside"); })) {
    d.next_steps.push_back("A dynamic dimension outside its range: widen the Dim's min/max when exporting.");
  }
  return d;
}

std::optional<Diagnosis> IndexOutOfBounds(const TriageEvidence& e) {
  static const std::regex pattern(R"(index out of bounds: 0 <= (tmp\d+) < (ks\d+|\d+))");
  const std::string text = AllText(e);
  std::smatch m;
  if (!std::regex_search(text, m, pattern)) return std::nullopt;
  Diagnosis d;
  d.evidence.push_back("a device-side assertion: " + m.str(0));
  static const std::regex kernel(R"((triton_\w+))");
  std::smatch k;
  const std::string name = std::regex_search(text, k, kernel) ? k.str(1) : "";
  if (!name.empty()) d.evidence.push_back("in kernel " + name);
  const std::string ks = m.str(2);
  d.evidence.push_back(m.str(1) + " is an index the kernel computed; " + ks +
                       (ks.rfind("ks", 0) == 0 ? " is one of the kernel's symbolic size arguments (an input's size)"
                                               : " is a size fixed at compile time"));
  d.next_steps = {
      "Find the kernel in the generated code: $ TORCH_LOGS=output_code python -c '...your compile...' (or the "
      "package's data/aotinductor/<model>/*.cpp / *.py), and look for " +
          (name.empty() ? std::string("the kernel") : name) + " and the line that asserts " + m.str(1) + ".",
      "Map " + ks + " to the input size it stands for: the kernel's signature lists ks0, ks1, ... in the order the "
                    "wrapper passes them; the wrapper's call of the kernel shows which input size each is.",
      "Look for a missing lower-bound guard (a negative index that should wrap: x[i] with i < 0) and for an empty "
      "tensor (a size-0 input the kernel does not skip): both produce this assertion.",
      ReduceStep(e)};
  return d;
}

std::optional<Diagnosis> IllegalMemoryAccess(const TriageEvidence& e) {
  const std::string text = AllText(e);
  if (!Contains(text, "illegal memory access") && !Contains(text, "cudaErrorIllegalAddress")) return std::nullopt;
  Diagnosis d;
  d.evidence.push_back("CUDA reported an illegal memory access: " + TailLines(e.stderr_text.empty() ? e.message : e.stderr_text, 2));
  d.evidence.push_back("CUDA reports errors asynchronously: the kernel named in the error is often not the one "
                       "that faulted");
  d.next_steps = {
      "1. Sanity: re-run with the run-time input checks: $ bazel test <this test> --test_arg=--aoti_runtime_check_inputs",
      "2. Deterministic re-run (synchronous launches, no caching allocator), for the compiled run only: $ bazel test "
      "<this test> --test_arg=--aoti_runner_env=CUDA_LAUNCH_BLOCKING=1,PYTORCH_NO_CUDA_MEMORY_CACHING=1",
      "3. Name the kernel: recompile with the intermediate value printer, kernel names only "
      "(inductor_configs = {\"aot_inductor.debug_intermediate_value_printer\": \"3\"}): the last kernel launched "
      "and never finished is the culprit; then print its values only "
      "(\"aot_inductor.debug_intermediate_value_printer\": \"2\", \"aot_inductor.filtered_kernel_names\": "
      "\"<that kernel>\").",
      ReduceStep(e)};
  return d;
}

std::optional<Diagnosis> CustomOpSymInt(const TriageEvidence& e) {
  const std::string text = AllText(e);
  static const std::regex symbolic(
      R"(Cannot call (sizes|strides|numel|storage_offset)\(\) on tensor with symbolic sizes/strides)");
  // torch 2.13 specialises the dimension instead where sizes() is called on a symbolic
  // tensor in C++, so export stops on the constraint it then violates.
  static const std::regex specialised(R"(Constraints violated \(([^)]*)\)![\s\S]*?specialized it to be a constant \((\d+)\))");
  std::smatch m;
  Diagnosis d;
  if (std::regex_search(text, m, symbolic)) {
    d.evidence.push_back("a meta (shape) function called " + m.str(1) +
                         "() on a tensor whose sizes are symbolic (a dynamic dimension): " + m.str(0));
  } else if (std::regex_search(text, m, specialised)) {
    d.evidence.push_back("the dynamic dimension '" + m.str(1) + "' was specialised to " + m.str(2) +
                         " while tracing: something read its value as a plain integer");
    d.evidence.push_back("a C++ meta function that calls x.sizes() (not x.sym_sizes()) does exactly that under "
                         "torch 2.13; so does Python code that calls int() on a size");
  } else {
    return std::nullopt;
  }
  if (!e.op_libraries.empty()) d.evidence.push_back("custom-op libraries are loaded: " + e.op_libraries.front());
  // The operator: the first ns::op (or torch.ops.ns.op) of a namespace that is not torch's own.
  static const std::regex qualified(R"(\b([A-Za-z_]\w*)(?:::|\.)([A-Za-z_]\w*)\b)");
  static const std::vector<std::string> own = {"aten", "prims", "c10", "at", "std", "torch", "caffe2", "ops", "_ops"};
  for (auto it = std::sregex_iterator(text.begin(), text.end(), qualified); it != std::sregex_iterator(); ++it) {
    const std::string ns = (*it)[1].str();
    if (std::find(own.begin(), own.end(), ns) != own.end()) continue;
    if (Contains(text, "torch.ops." + ns + ".") || Contains(text, ns + "::" + (*it)[2].str())) {
      d.evidence.push_back("the operator: " + ns + "::" + (*it)[2].str());
      break;
    }
  }
  d.next_steps = {
      "The custom op's meta (Meta / fake) function must work with symbolic sizes: in C++ use x.sym_sizes(), "
      "x.sym_numel() and c10::SymInt (at::empty_symint) instead of sizes(), numel() and int64_t.",
      "Or register the shape function in Python: @torch.library.register_fake(\"ns::op\") def _(x): return "
      "torch.empty_like(x).",
      "Find where the dimension was specialised (the log names the frame that guarded on it):",
      "$ TORCH_LOGS=\"+dynamic\" python -c '<your torch.export call>'",
      "Check it without AOTI: torch.export.export(model, inputs, dynamic_shapes=...) must succeed."};
  return d;
}

std::optional<Diagnosis> ExportError(const TriageEvidence& e) {
  if (!Is(e.failure_class, FailureClass::kExportError)) return std::nullopt;
  Diagnosis d;
  d.evidence.push_back("torch.export could not trace the model, so there is no program to compile or run: " +
                       TailLines(e.message, 3));
  d.next_steps = {"Run the export alone and read its full error:",
                  "$ python -c \"import torch, model; m = model.make_model().eval(); "
                  "torch.export.export(m, model.example_inputs())\"",
                  "torch.export.draft_export(...) lists every problem of the export at once, with where each arises."};
  return d;
}

std::optional<Diagnosis> NanInf(const TriageEvidence& e) {
  std::vector<std::string> found;
  for (const auto& o : e.outputs) {
    const int64_t compiled = o.compiled_nan + o.compiled_inf, eager = o.eager_nan + o.eager_inf;
    if (compiled > eager) {
      found.push_back("output '" + o.name + "': the compiled model made " + std::to_string(o.compiled_nan) + " NaN and " +
                      std::to_string(o.compiled_inf) + " Inf of " + std::to_string(o.numel) + " elements; eager made " +
                      std::to_string(o.eager_nan) + " NaN and " + std::to_string(o.eager_inf) + " Inf");
    }
  }
  if (found.empty()) return std::nullopt;
  Diagnosis d;
  d.evidence = found;
  d.evidence.push_back(e.non_finite_inputs == 0 ? "every input is finite: a kernel made them"
                                                : std::to_string(e.non_finite_inputs) + " input elements are NaN/Inf");
  for (const auto& r : e.reruns) d.evidence.push_back(r);
  if (!e.culprit.empty()) d.evidence.push_back("the reducer's first node that makes them: '" + e.culprit + "' (" + e.culprit_op + ")");
  d.next_steps = {
      e.culprit.empty() ? ReduceStep(e) + " (localize_first names the first node whose compiled value diverges)"
                        : "The culprit node alone reproduces it: python repro.py, beside this file.",
      "On CUDA, recompile with TORCHINDUCTOR_NAN_ASSERTS=1 (a compile-time setting): each Triton kernel asserts its "
      "outputs are finite. On CPU the torch 2.13 wheel checks only the graph's inputs with it, which the harness has "
      "done above.",
      "Print the suspect kernel's values: inductor_configs = {\"aot_inductor.debug_intermediate_value_printer\": \"2\", "
      "\"aot_inductor.filtered_kernel_names\": \"<kernel>\"}."};
  return d;
}

// The first "file:line:col: error: ..." of the compiler, and the source line it shows.
std::pair<std::string, std::string> FirstCompilerError(const std::string& text) {
  static const std::regex error(R"(([^\s:]+\.(?:cpp|cu|h|hpp|cc|c)):(\d+):(?:\d+:)? (?:fatal )?error: ([^\n]*))");
  std::smatch m;
  if (!std::regex_search(text, m, error)) return {"", ""};
  const std::string file = m.str(1);
  const std::string where = file.substr(file.rfind('/') + 1) + ":" + m.str(2) + ": error: " + m.str(3);
  static const std::regex source(R"(^\s*(\d+) \| ([^\n]*))", std::regex::multiline);
  const std::string rest = m.suffix().str();
  std::smatch s;
  std::string line;
  if (std::regex_search(rest, s, source) && s.str(1) == m.str(2)) line = s.str(1) + " | " + s.str(2);
  return {where, line};
}

std::optional<Diagnosis> CompileError(const TriageEvidence& e) {
  if (!Is(e.failure_class, FailureClass::kCompileError)) return std::nullopt;
  Diagnosis d;
  const auto [where, line] = FirstCompilerError(e.message);
  if (!where.empty()) {
    d.evidence.push_back("the C++ compiler refused the generated code: " + where);
    if (!line.empty()) d.evidence.push_back("the failing line: " + line);
  } else {
    d.evidence.push_back("the AOTI compile failed when the package was built: " + TailLines(e.message, 2));
  }
  static const std::regex kernel(R"(In function [^\n]*?(cpp_fused_\w+|kernel_\w+))");
  std::smatch k;
  if (std::regex_search(e.message, k, kernel)) d.evidence.push_back("in kernel " + k.str(1));
  if (!e.culprit.empty()) d.evidence.push_back("the reducer's culprit: node '" + e.culprit + "' (" + e.culprit_op + ")");
  d.next_steps = {e.culprit.empty() ? ReduceStep(e) + " (localize_kernel maps the failing kernel to its nodes)"
                                    : "The repro beside this file fails the same way: python repro.py.",
                  "The generated source is kept with TORCH_COMPILE_DEBUG=1 or TORCH_LOGS=output_code when compiling; "
                  "the failing line above is in it.",
                  "Report it to PyTorch with the repro (repro.py and repro.pt2): generated code that does not "
                  "compile is an inductor bug."};
  return d;
}

std::optional<Diagnosis> Crash(const TriageEvidence& e) {
  const bool crashed = IsCrash(e.failure_class) || Is(e.failure_class, FailureClass::kLoadError);
  if (!crashed) return std::nullopt;
  Diagnosis d;
  d.evidence.push_back("the compiled run ended in " + e.failure_class +
                       (e.stderr_text.empty() ? std::string("") : ": " + TailLines(e.stderr_text, 2)));
  if (!e.op_libraries.empty()) {
    d.evidence.push_back("custom-op libraries are loaded (" + e.op_libraries.front() +
                         "): a custom op is a suspect; the kernel-name printer does not wrap custom ops");
  }
  for (const auto& r : e.reruns) d.evidence.push_back(r);
  if (!e.culprit.empty()) d.evidence.push_back("the reducer's culprit: node '" + e.culprit + "' (" + e.culprit_op + ")");
  d.next_steps = {e.culprit.empty() ? ReduceStep(e) + " (localize_kernel names the kernel launched and never "
                                                                  "finished, in one compile)"
                                    : "The repro beside this file fails the same way: python repro.py.",
                  "Check the inputs at run time: $ bazel test <this test> --test_arg=--aoti_runtime_check_inputs"};
  if (Is(e.failure_class, FailureClass::kTimeout)) {
    d.next_steps.push_back("A hang: raise --aoti_timeout_s if the model is only slow; else the reducer's printer "
                           "names the kernel that never finished.");
  }
  return d;
}

std::optional<Diagnosis> AccuracyDrift(const TriageEvidence& e) {
  if (!Is(e.failure_class, FailureClass::kAccuracy)) return std::nullopt;
  Diagnosis d;
  static const std::regex output(R"(output (\d+) '([^']*)' \(([^)]*)\): ([^\n]*))");
  std::smatch m;
  if (std::regex_search(e.message, m, output)) {
    d.evidence.push_back("output " + m.str(1) + " '" + m.str(2) + "' (" + m.str(3) + "): " + m.str(4));
  }
  static const std::regex rmse(R"(RMSE\(compiled, fp64\)[^\n]*)");
  if (std::regex_search(e.message, m, rmse)) d.evidence.push_back(m.str(0));
  if (!e.culprit.empty()) {
    d.evidence.push_back("the first divergent node: '" + e.culprit + "' (" + e.culprit_op +
                         "): on its own inputs its compiled value diverges from eager and float64");
  }
  d.next_steps = {e.culprit.empty() ? ReduceStep(e) + " (localize_first names the first divergent node in "
                                                                  "one compile)"
                                    : "The repro beside this file holds that node alone: python repro.py.",
                  "The error per element is plotted in report.html beside the repro: drift everywhere, in one "
                  "channel or in the tail."};
  return d;
}

std::optional<Diagnosis> Nondeterministic(const TriageEvidence& e) {
  if (!Is(e.failure_class, FailureClass::kNondeterministic)) return std::nullopt;
  Diagnosis d;
  // Up to the end of the clause: a ';' or a full stop ('.' then a space or the end), not
  // the dots of an operator's name (aten.randn_like.default) or of a number (0.25).
  static const std::regex draws(R"(it draws random numbers in (.*?)(?:;|\.(?:\s|$)))");
  static const std::regex differ(R"(two eager runs.*?(?=\.(?:\s|$)))");
  std::smatch m;
  if (std::regex_search(e.message, m, draws)) d.evidence.push_back("random operators: " + m.str(1));
  if (std::regex_search(e.message, m, differ)) d.evidence.push_back(m.str(0));
  d.evidence.push_back("not reduced: eager, float64 and the compiled model draw other numbers, so any difference "
                       "could be the noise");
  d.next_steps = {"Compile the package with inductor_configs = {\"fallback_random\": \"true\"} (aoti_package) and run "
                  "the check seeded: $ bazel test <this test> --test_arg=--aoti_seed=0   (the compiled model then calls "
                  "ATen's random ops, and both runs draw the same numbers: checked on torch 2.13 for randn_like and "
                  "dropout)",
                  "Or test the model's deterministic form (eval mode turns dropout off; a sampling step can take its "
                  "noise as an input)."};
  return d;
}

std::optional<Diagnosis> Flaky(const TriageEvidence& e) {
  static const std::regex rate(R"(flaky: it failed (\d+) of (\d+) runs[^;]*; a reduction of it votes: ([^\n]*))");
  std::smatch m;
  if (!std::regex_search(e.message, m, rate)) return std::nullopt;
  Diagnosis d;
  d.evidence.push_back("the compiled model failed " + m.str(1) + " of " + m.str(2) +
                       " runs on the same inputs: the failure comes and goes");
  if (e.message.find("its outputs differ from run to run") != std::string::npos) {
    d.evidence.push_back("its outputs differ from run to run on the same inputs (eager's do not)");
  }
  d.evidence.push_back("reduced with a vote: " + m.str(3));
  d.next_steps = {"Run it on one thread, to tell a race from the rest: $ bazel test <this test> "
                  "--test_arg=--aoti_runner_env=OMP_NUM_THREADS=1",
                  "Run the compiled model under a memory checker for uninitialised reads (valgrind --track-origins=yes "
                  "on aoti_runner), or with AOTI_RUNTIME_CHECK_INPUTS=1 (--aoti_runtime_check_inputs)",
                  "Check the repro by the same vote: its repro.py and repro_test run it up to the vote's count"};
  return d;
}

std::optional<Diagnosis> UnreliableReference(const TriageEvidence& e) {
  if (!Is(e.failure_class, FailureClass::kUnreliableReference)) return std::nullopt;
  Diagnosis d;
  static const std::regex output(R"(output (\d+) '([^']*)' \(([^)]*)\): eager is ([0-9]+)%)");
  for (std::sregex_iterator it(e.message.begin(), e.message.end(), output), end; it != end; ++it) {
    d.evidence.push_back("output " + it->str(1) + " '" + it->str(2) + "' (" + it->str(3) + "): eager is " + it->str(4) +
                         "% from float64 (relative RMSE)");
  }
  d.evidence.push_back("the float64 RMSE bound scales with eager's own error, so it would pass any compiled output of "
                       "that size: the output is not judged, and not reduced");
  d.next_steps = {"Judge it against eager: $ bazel test <this test> --test_arg=--aoti_accuracy=strict "
                  "--test_arg=--aoti_tolerance=<what the model allows>",
                  "Find why eager is so far from float64: an ill-conditioned op (a difference of near-equal values, a "
                  "large exponent), or a cast to a low precision inside the model that the float64 run keeps."};
  return d;
}

std::optional<Diagnosis> HarnessDisagreement(const TriageEvidence& e) {
  if (!Is(e.failure_class, FailureClass::kHarnessDisagreement)) return std::nullopt;
  Diagnosis d;
  static const std::regex at(R"(recorded when it was built, at ([^\n]*?)\. The failure)");
  std::smatch m;
  if (std::regex_search(e.message, m, at)) d.evidence.push_back(m.str(1));
  d.evidence.push_back("the compiled model was not judged: the harness' eager reference is in doubt");
  d.next_steps = {"A bug in aoti_harness, not in AOTI: please report it with this package (original.pt2 beside this "
                  "file).",
                  "If the package was rebuilt by hand, rebuild it with aoti_package: the recording must come from the "
                  "same program and inputs."};
  return d;
}

// The words EnsureOperators (harness/runner/op_libraries.cc) opens a Python-only operator's message with.
constexpr char kWrittenOnlyInPython[] = "written only in Python: ";

std::optional<Diagnosis> PythonOnlyOp(const TriageEvidence& e) {
  if (!Is(e.failure_class, FailureClass::kNotSupported)) return std::nullopt;
  const size_t at = e.message.find(kWrittenOnlyInPython);
  if (at == std::string::npos) return std::nullopt;
  Diagnosis d;
  static const std::regex op(R"('([A-Za-z_]\w*::[\w.]+)' \((\d+) nodes?[;)])");
  const std::string rest = e.message.substr(at);
  for (auto it = std::sregex_iterator(rest.begin(), rest.end(), op); it != std::sregex_iterator(); ++it) {
    d.evidence.push_back((*it)[1].str() + " (" + (*it)[2].str() + " node" + ((*it)[2].str() == "1" ? "" : "s") +
                         "): defined in Python, no C++ kernel");
  }
  if (e.message.find(" back into Python (AOTI's proxy executor)") != std::string::npos) {
    d.evidence.push_back("the compiled model calls back into Python for it: a C++ deployment of this package fails "
                         "at that call");
  }
  d.evidence.push_back("checked before anything ran: nothing was judged, nothing is reduced; this says nothing about "
                       "AOTI's code");
  if (e.message.find("transformers::") != std::string::npos) {
    d.next_steps.push_back("transformers: build the model with experts_implementation=\"batched_mm\" in its config "
                           "(ATen operators only), re-package, and test that.");
  }
  d.next_steps.push_back("Give the operator a C++ kernel: TORCH_LIBRARY_IMPL for the same schema in a shared library, "
                         "listed as op_libraries on the aoti_package and the aoti_model_test.");
  d.next_steps.push_back("Or export the model with that part written in ATen operators (a plain PyTorch module in "
                         "place of the custom op).");
  return d;
}

std::optional<Diagnosis> NotSupported(const TriageEvidence& e) {
  if (!Is(e.failure_class, FailureClass::kNotSupported)) return std::nullopt;
  if (e.message.find(kWrittenOnlyInPython) != std::string::npos) return std::nullopt;  // PythonOnlyOp's
  Diagnosis d;
  static const std::regex construct(R"((node '[^']*' \([^)]*\)|program input '[^']*')[^\n]*?(does not run yet|not supported yet))");
  std::smatch m;
  if (std::regex_search(e.message, m, construct)) d.evidence.push_back(m.str(0));
  d.evidence.push_back("neither eager nor float64 could run, so the compiled model was not judged, and nothing is "
                       "reduced: this says nothing about AOTI");
  d.next_steps = {"The construct is listed in aoti_harness's docs/not_done.md; tell the harness's maintainers which "
                  "model needs it.",
                  "Meanwhile, check the parts of the model the harness runs: package a submodule without the construct "
                  "(aoti_package(model = ...)) and test that."};
  return d;
}

std::optional<Diagnosis> InvalidInputs(const TriageEvidence& e) {
  if (!Is(e.failure_class, FailureClass::kInvalidInputs)) return std::nullopt;
  Diagnosis d;
  static const std::regex eager(R"(eager: ([^\n]*))"), from(R"(the inputs: ([^\n]*))");
  std::smatch m;
  if (std::regex_search(e.message, m, eager)) d.evidence.push_back("eager: " + m.str(1));
  if (std::regex_search(e.message, m, from)) d.evidence.push_back("the inputs: " + m.str(1));
  d.evidence.push_back("eager fails on the same inputs, so the compiled model's failure says nothing about AOTI: not "
                       "judged, not reduced");
  d.next_steps = {"Where the harness made these inputs (a shape point), give the model's own inputs for that shape "
                  "(docs/accuracy.md, dynamic shapes), or check the shapes it plans with --aoti_shapes.",
                  "Where a team gave them, fix the inputs: eager's message above says which argument of which "
                  "operator refuses them."};
  return d;
}

std::string DescribeInput(const at::Tensor& t) {
  if (!t.defined()) return "undefined";
  return DescribeTensor(t) + " on " + t.device().str();
}

int64_t CountIf(const at::Tensor& t, bool nan) {
  if (!t.defined() || !t.is_floating_point() || t.is_meta()) return 0;  // a meta tensor has no values
  return (nan ? t.isnan() : t.isinf()).sum().item<int64_t>();
}

}  // namespace

const std::vector<DiagnosisRule>& DiagnosisTable() {
  static const auto* table = new std::vector<DiagnosisRule>{
      {"deprecated_aot_compile", "A bare .so from the deprecated aot_compile where a package was expected",
       "the package path is an ELF shared object, or the failure names aot_compile / aot_load", DeprecatedApi},
      {"device_mismatch", "The package's device and the host's or the inputs' differ",
       "preflight device problems (package vs host, inputs vs package), or 'unmatched device type'", DeviceMismatch},
      {"cpu_isa_mismatch", "An illegal instruction: the kernels' CPU ISA and this CPU",
       "the preflight's CPU ISA refusal, or death by SIGILL", CpuIsa},
      {"shape_dtype_mismatch", "The inputs do not match what the package was compiled for",
       "preflight problems of the inputs: count, dtype, shape, a dynamic dimension out of range, strides", ShapeDtype},
      {"index_out_of_bounds", "A Triton kernel indexed out of bounds",
       "'index out of bounds: 0 <= tmpN < ksM' in the error", IndexOutOfBounds},
      {"cuda_illegal_memory_access", "CUDA illegal memory access", "'illegal memory access' in the error",
       IllegalMemoryAccess},
      {"custom_op_symint_meta", "A custom op's meta function does not handle symbolic sizes",
       "'Cannot call sizes() on tensor with symbolic sizes/strides' (or strides/numel), or a dynamic dimension "
       "specialised to a constant (torch 2.13's form of the same mistake)",
       CustomOpSymInt},
      {"export_error", "torch.export failed when the package was built", "failure class export error", ExportError},
      {"nan_inf", "A kernel made NaN or Inf", "the compiled outputs have NaN/Inf that eager's do not", NanInf},
      {"compile_error", "The generated C++ does not compile", "failure class compile error; the compiler's first error",
       CompileError},
      {"flaky", "The failure comes and goes: the compiled model differs between runs on the same inputs",
       "a failure of the compiled run that reruns on the same inputs do not always repeat", Flaky},
      {"crash", "The compiled model crashed, raised or hung",
       "failure class signal, runtime error, load error or timeout", Crash},
      {"accuracy_drift", "The compiled model's numbers drift from eager and float64", "failure class accuracy",
       AccuracyDrift},
      {"nondeterministic", "The model is random: no rule can judge it",
       "failure class nondeterministic: random operators in the program, or two eager runs that differ",
       Nondeterministic},
      {"unreliable_reference", "Eager is too far from float64 for float64 to judge",
       "failure class unreliable reference: eager's relative RMSE against float64 above 10%", UnreliableReference},
      {"python_only_op", "The program calls an operator written only in Python: no C++ process can run it",
       "failure class not supported, the operators the package records as defined in Python (manifest python_ops) "
       "missing from this process",
       PythonOnlyOp},
      {"not_supported", "The program uses a construct the harness does not run yet",
       "failure class not supported: a higher-order op, a Python callable or an input kind the interpreter does not run",
       NotSupported},
      {"invalid_inputs", "The inputs are invalid for the model: eager fails on them too",
       "failure class invalid inputs: an operator raised in eager on the inputs the compiled model failed on",
       InvalidInputs},
      {"harness_disagreement", "The harness' eager interpreter disagrees with Python eager",
       "failure class harness disagreement: the recorded Python eager outputs differ from the interpreter's",
       HarnessDisagreement},
  };
  return *table;
}

std::vector<Diagnosis> Triage(const TriageEvidence& evidence) {
  std::vector<Diagnosis> out;
  if (evidence.failure_class.empty()) return out;
  for (const auto& rule : DiagnosisTable()) {
    if (auto d = rule.match(evidence)) {
      d->id = rule.id;
      d->title = rule.title;
      out.push_back(std::move(*d));
    }
  }
  // A crash or drift that a more specific diagnosis explains is not listed again.
  if (out.size() > 1) {
    out.erase(std::remove_if(out.begin() + 1, out.end(),
                             [](const Diagnosis& d) {
                               return d.id == "crash" || d.id == "accuracy_drift" || d.id == "export_error";
                             }),
              out.end());
  }
  return out;
}

TriageEvidence GatherEvidence(const std::string& package, const std::vector<at::Tensor>* inputs,
                              const CheckReport& report, const CheckOptions& options) {
  TriageEvidence e;
  e.package = package;
  e.failure_class = report.pass ? "" : report.failure_class;
  e.message = report.message;
  e.stderr_text = report.outcome.stderr_text;
  e.signal = report.outcome.kind == OutcomeKind::kSignal ? report.outcome.signal : 0;
  e.preflight_problems = report.preflight_problems;
  e.op_libraries = options.runner.op_libraries;
  e.host = DetectHost();
  {
    std::ifstream in(package, std::ios::binary);
    char magic[4] = {0, 0, 0, 0};
    in.read(magic, 4);
    e.package_is_shared_object = in.gcount() == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
  }
  std::vector<at::Tensor> sample;
  std::vector<std::string> output_names;
  if (!e.package_is_shared_object) {
    try {
      auto archive = Pt2Archive::Open(package);
      e.model = archive->ResolveModelName(options.model);
      if (archive->HasCompiledModel(e.model)) e.metadata = archive->AotiMetadata(e.model);
      if (!inputs) sample = archive->SampleInputs();
    } catch (const std::exception&) {
      // The failure message says what is wrong with the package.
    }
  }
  const std::vector<at::Tensor>& given = inputs ? *inputs : sample;
  for (const auto& t : given) {
    e.inputs.push_back(DescribeInput(t));
    e.non_finite_inputs += CountIf(t, true) + CountIf(t, false);
  }
  const auto& compiled = report.outcome.outputs;
  for (size_t i = 0; i < compiled.size() && i < report.eager_outputs.size(); ++i) {
    OutputFiniteness o;
    o.name = "output " + std::to_string(i);
    o.numel = compiled[i].defined() ? compiled[i].numel() : 0;
    o.compiled_nan = CountIf(compiled[i], true);
    o.compiled_inf = CountIf(compiled[i], false);
    o.eager_nan = CountIf(report.eager_outputs[i], true);
    o.eager_inf = CountIf(report.eager_outputs[i], false);
    e.outputs.push_back(o);
  }
  return e;
}

bool NeedsDebugRerun(const TriageEvidence& e) {
  if (IsCrash(e.failure_class)) {
    return true;
  }
  for (const auto& o : e.outputs) {
    if (o.compiled_nan + o.compiled_inf > o.eager_nan + o.eager_inf) return true;
  }
  return false;
}

void DebugRerun(const std::string& package, const std::vector<at::Tensor>& inputs, const CheckOptions& options,
                TriageEvidence* evidence) {
  RunnerOptions runner = options.runner;
  runner.isolate = true;  // a debug re-run of a crash must not take the test with it
  runner.runtime_check_inputs = true;
  // A hang is re-run briefly: an input the checks refuse fails at once; a real hang would
  // only cost the whole timeout again.
  const bool hang = Is(evidence->failure_class, FailureClass::kTimeout);
  if (hang) runner.timeout_s = std::min(runner.timeout_s, 10.0);
  const std::string model = evidence->model.empty() ? options.model : evidence->model;
  const CompiledOutcome o = RunCompiled(package, model, inputs, runner);
  std::string what;
  if (o.ok()) {
    what = "ran to the end; the generated input checks found nothing wrong";
  } else {
    std::string summary = o.Summary();
    if (summary.size() > 300) summary = summary.substr(0, 300) + "...";
    const bool same = (o.kind == OutcomeKind::kSignal && evidence->signal == o.signal) ||
                      OutcomeKindName(o.kind) == evidence->failure_class;
    what = hang && o.kind == OutcomeKind::kTimeout
               ? "still running after " + std::to_string(static_cast<int>(runner.timeout_s)) +
                     " s (stopped there), so the inputs pass the generated checks"
               : (same ? "failed the same way, so the inputs pass the generated checks: " : "failed differently: ") + summary;
  }
  evidence->reruns.push_back("debug re-run with AOTI_RUNTIME_CHECK_INPUTS=1 (run time, this child only): " + what);
  // On CUDA, once more with the deterministic settings: synchronous launches and no
  // caching allocator, so an asynchronous fault is reported by the kernel that made it.
  if (Get(evidence->metadata, "AOTI_DEVICE_KEY") == "cuda" && evidence->host.has_cuda) {
    RunnerOptions deterministic = runner;
    deterministic.env.emplace_back("CUDA_LAUNCH_BLOCKING", "1");
    deterministic.env.emplace_back("PYTORCH_NO_CUDA_MEMORY_CACHING", "1");
    const CompiledOutcome d = RunCompiled(package, model, inputs, deterministic);
    std::string summary = d.ok() ? std::string("ran to the end (the failure depends on timing or on the allocator)")
                                 : d.Summary().substr(0, 300);
    evidence->reruns.push_back(
        "debug re-run with CUDA_LAUNCH_BLOCKING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1 (run time, this child only): " +
        summary + (d.stderr_text.empty() ? "" : " / " + TailLines(d.stderr_text, 2)));
  }
}

const std::vector<DebugSetting>& DebugSettings() {
  static const auto* settings = new std::vector<DebugSetting>{
      {"AOTI_RUNTIME_CHECK_INPUTS=1", "run time",
       "the generated wrapper's __check_inputs_outputs (codegen/cpp_wrapper_cpu.py), by getenv at its first run",
       "checks each input's dtype, sizes, strides and device type against the compiled ones",
       "--aoti_runtime_check_inputs (the harness sets it for the compiled run's child only)"},
      {"TORCHINDUCTOR_NAN_ASSERTS=1", "compile time",
       "torch/_inductor/config.py (nan_asserts) at import; codegen/cpp_wrapper_cpu.py and codegen/simd.py",
       "CPU: checks the graph's inputs for NaN/Inf (aoti_torch_check_inf_and_nan); CUDA/Triton: every kernel's "
       "outputs too",
       "inductor_configs = {\"nan_asserts\": \"true\"} on the aoti_package, or the variable when packaging"},
      {"AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER=3 (names) / 2 (values)", "compile time",
       "torch/_inductor/config.py (aot_inductor.debug_intermediate_value_printer)",
       "prints each kernel's name (3) or its values (2) as it runs; AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT limits it",
       "the reducer uses 3 itself (localize_kernel); by hand: inductor_configs on the aoti_package"},
      {"CUDA_LAUNCH_BLOCKING=1", "run time", "the CUDA runtime", "synchronous kernel launches: the error names the "
       "kernel that faulted", "--aoti_runner_env=CUDA_LAUNCH_BLOCKING=1"},
      {"PYTORCH_NO_CUDA_MEMORY_CACHING=1", "run time", "c10/cuda's caching allocator at start-up",
       "every allocation from cudaMalloc: out-of-bounds accesses fault where they happen",
       "--aoti_runner_env=PYTORCH_NO_CUDA_MEMORY_CACHING=1"},
  };
  return *settings;
}

std::string DiagnosisMarkdown(const std::vector<Diagnosis>& diagnoses, const TriageEvidence& e) {
  std::ostringstream md;
  md << "# AOTI diagnosis\n\n";
  if (diagnoses.empty()) {
    md << "No diagnosis matched this failure (" << e.failure_class << "). The failure:\n\n```\n" << e.message << "\n```\n";
  }
  for (size_t i = 0; i < diagnoses.size(); ++i) {
    const auto& d = diagnoses[i];
    md << "## " << (i == 0 ? "" : "Also: ") << d.title << " (`" << d.id << "`)\n\n### Evidence\n\n";
    for (const auto& line : d.evidence) md << "- " << line << "\n";
    md << "\n### Next steps\n\n";
    for (const auto& step : d.next_steps) {
      if (step.rfind("$ ", 0) == 0) {
        md << "```\n" << step.substr(2) << "\n```\n";
      } else {
        md << "- " << step << "\n";
      }
    }
    md << "\n";
  }
  md << "## What the harness saw\n\n- failure class: " << e.failure_class << "\n- package: " << e.package << "\n";
  if (!e.metadata.empty()) {
    md << "- compiled for: " << Get(e.metadata, "AOTI_DEVICE_KEY") << ", CPU ISA " << Get(e.metadata, "AOTI_CPU_ISA") << "\n";
  }
  md << "- this host: " << e.host.machine << ", " << HostIsa(e.host) << ", " << (e.host.has_cuda ? "CUDA" : "no CUDA") << "\n";
  for (size_t i = 0; i < e.inputs.size(); ++i) md << "- input " << i << ": " << e.inputs[i] << "\n";
  for (const auto& r : e.reruns) md << "- " << r << "\n";
  md << "\n## Debug settings\n\nOn only while debugging: each costs speed. The harness sets them for one child "
        "process, never for normal runs.\n\n| setting | read at | where the wheel reads it | what it does | how to set it here |\n"
        "| --- | --- | --- | --- | --- |\n";
  for (const auto& s : DebugSettings()) {
    md << "| `" << s.name << "` | " << s.read << " | " << s.where << " | " << s.effect << " | " << s.how << " |\n";
  }
  return md.str();
}

std::string DiagnosisSummary(const std::vector<Diagnosis>& diagnoses) {
  if (diagnoses.empty()) return "";
  const Diagnosis& d = diagnoses.front();
  std::string s = "Diagnosis " + d.id + ": " + d.title + ".";
  for (size_t i = 0; i < d.evidence.size() && i < 2; ++i) s += " " + d.evidence[i] + ".";
  if (!d.next_steps.empty()) {
    const std::string& step = d.next_steps.front();
    s += " Next: " + (step.rfind("$ ", 0) == 0 ? step.substr(2) : step);
  }
  return s;
}

}  // namespace aoti
