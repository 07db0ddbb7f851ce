#include "harness/check/check.h"
#include "harness/util/failure_class.h"

#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <map>
#include <limits>
#include <memory>
#include <set>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <nlohmann/json.hpp>

#include "harness/util/errors.h"
#include "harness/program/interpreter.h"
#include "harness/runner/op_libraries.h"
#include "harness/check/preflight.h"
#include "harness/archive/pt2_archive.h"
#include "harness/archive/tensor_io.h"
#include "harness/util/strings.h"

namespace aoti {
namespace {

// RandomNodes: the program's nodes whose operator draws random numbers (tagged
// nondeterministic_seeded in this wheel: randn_like, rand, bernoulli, native_dropout,
// scaled_dot_product_attention, ...), as "name (aten.randn_like.default)". A node whose
// dropout is off draws nothing and is left out: train false, or a probability p / dropout_p
// of 0, as given or by the schema's default (attention's dropout_p is 0 unless given).
std::vector<std::string> RandomNodes(const Program& program) {
  std::vector<std::string> out;
  ForEachNode(program.nodes, [&](const Node& node, const std::string& scope) {
    std::string name, overload;
    if (!ParseTarget(node.target, &name, &overload)) return;
    const auto op = c10::Dispatcher::singleton().findSchema({name, overload});
    if (!op || !op->hasTag(at::Tag::nondeterministic_seeded)) return;
    bool draws = true;
    for (const auto& a : op->schema().arguments()) {
      if (a.name() != "train" && a.name() != "p" && a.name() != "dropout_p") continue;
      const nlohmann::json* given = nullptr;
      for (const auto& in : node.inputs) {
        if (in.name == a.name()) given = &in.arg;
      }
      if (a.name() == "train") {
        if (given && given->contains("as_bool")) {
          draws = draws && (*given)["as_bool"].get<bool>();
        } else if (!given && a.default_value() && a.default_value()->isBool()) {
          draws = draws && a.default_value()->toBool();
        }
        continue;
      }
      if (given && given->contains("as_float")) {
        draws = draws && (*given)["as_float"].get<double>() != 0.0;
      } else if (!given && a.default_value() && a.default_value()->isDouble()) {
        draws = draws && a.default_value()->toDouble() != 0.0;
      }
    }
    if (draws) out.push_back(NodePath(node, scope) + " (" + node.target.substr(node.target.rfind("torch.ops.", 0) == 0 ? 10 : 0) + ")");
  });
  return out;
}

// MutatesState: a run changes the program's parameters or buffers (a mutation output, or an
// in-place op on a lifted one), so a second run does not start where the first did.
bool MutatesState(const Program& program) {
  std::set<std::string> state;
  for (const auto& s : program.output_specs) {
    if (s.kind == OutputKind::kBufferMutation || s.kind == OutputKind::kParameterMutation) return true;
  }
  for (const auto& s : program.input_specs) {
    if (s.kind != InputKind::kUserInput && !s.value_name.empty()) state.insert(s.value_name);
  }
  for (const auto& node : program.nodes) {
    for (const auto& v : MutatedValueNames(node)) {
      if (state.count(v)) return true;
    }
  }
  return false;
}

// SameValues: a and b hold the same values (NaN equal to NaN); else, where `first` and
// `max_diff` are given, the first tensor that differs and the greatest absolute difference there.
bool SameValues(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b, size_t* first = nullptr,
                double* max_diff = nullptr) {
  size_t unused_first = 0;
  double unused_diff = 0;
  if (!first) first = &unused_first;
  if (!max_diff) max_diff = &unused_diff;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const at::Tensor x = a[i].detach().cpu(), y = b[i].detach().cpu();
    if (x.sizes() != y.sizes() || x.scalar_type() != y.scalar_type()) {
      *first = i;
      *max_diff = std::numeric_limits<double>::infinity();
      return false;
    }
    if (x.is_floating_point() || x.is_complex()) {
      const at::Tensor same = at::eq(x, y).logical_or(at::isnan(x).logical_and(at::isnan(y)));
      if (same.all().item<bool>()) continue;
      *first = i;
      *max_diff = at::where(same, at::zeros_like(x), x - y).abs().max().item<double>();
      return false;
    }
    if (!at::equal(x, y)) {
      *first = i;
      *max_diff = (x.to(at::kDouble) - y.to(at::kDouble)).abs().max().item<double>();
      return false;
    }
  }
  *first = a.size();
  return a.size() == b.size();
}

// RecordedAgreement: eager's outputs against the Python eager outputs the package recorded
// when it was built. "" when they agree (at four times assert_close's tolerances for the
// dtype: another machine's thread count may reorder a reduction), else what differs.
std::string DisagreementWithRecorded(const std::vector<at::Tensor>& eager, const std::vector<at::Tensor>& recorded,
                                     const std::vector<std::string>& names) {
  for (size_t i = 0; i < eager.size(); ++i) {
    const at::Tensor e = eager[i].detach().cpu(), p = recorded[i];
    const std::string name = "output " + std::to_string(i) + " '" + (i < names.size() ? names[i] : "?") + "'";
    if (e.sizes() != p.sizes() || e.scalar_type() != p.scalar_type()) {
      return name + ": the interpreter gives " + DescribeTensor(e) + ", Python eager gave " + DescribeTensor(p);
    }
    const auto [rtol, atol] = AssertCloseTolerances(e.scalar_type());
    const bool is_bool = e.scalar_type() == at::kBool;
    if (at::allclose(is_bool ? e.to(at::kByte) : e, is_bool ? p.to(at::kByte) : p, 4 * rtol, 4 * atol, true)) continue;
    const double diff = (e.to(at::kDouble) - p.to(at::kDouble)).abs().nan_to_num(0).max().item<double>();
    return name + " (" + DescribeTensor(e) + "): the interpreter and Python eager differ by up to " +
           std::to_string(diff) + " (allowed: rtol " + std::to_string(4 * rtol) + ", atol " + std::to_string(4 * atol) + ")";
  }
  return "";
}

// FallbackRandom: the package's inductor configs set fallback_random (compiled random ops
// then call ATen's, drawing from the generator eager uses).
bool FallbackRandom(const Pt2Archive& archive) {
  if (!archive.Manifest()) return false;
  const nlohmann::json c = nlohmann::json::parse(archive.Manifest()->inductor_configs_json, nullptr, false);
  if (!c.is_object() || !c.contains("fallback_random")) return false;
  const auto& v = c["fallback_random"];
  return v.is_boolean() ? v.get<bool>() : v.is_string() && (v.get<std::string>() == "true" || v.get<std::string>() == "True");
}

CheckReport Fail(CheckReport r, std::string failure_class, std::string message) {
  r.pass = false;
  r.failure_class = std::move(failure_class);
  r.message = std::move(message);
  return r;
}

// References: what a check judges the compiled run by, kept from its first run for the
// reruns of its compiled model (eager and float64 are not run again).
struct References {
  bool valid = false;
  std::vector<at::Tensor> eager, fp64;
  std::string fp64_note, fp64_device;
};

// One check in progress: what its steps share. A step that fails fills `r` (Fail) and
// returns false; the check ends there.
struct Checking {
  const std::string& package;
  const std::vector<at::Tensor>* given;
  const CheckOptions& options;
  CheckReport r;
  std::string what;  // the package and model, as messages name them
  std::unique_ptr<Pt2Archive> archive;
  std::map<std::string, std::string> metadata;
  std::string device = "cpu";
  std::vector<at::Tensor> inputs;
  std::unique_ptr<Interpreter> eager;
  // Judged by the references Python recorded when packaging, with no eager interpreter: a
  // program that calls operators written only in Python, where the test asked for a Python
  // child (--aoti_python_imports), or a package that holds no program (torch's serializer
  // could not write it: `not_held` says why).
  bool held_by_recordings = false;
  bool python_child = false;  // the compiled model runs in a Python child (python_runner.py)
  std::string not_held;
  std::optional<Program> program_only;  // the program, where no interpreter holds it
  AccuracyOptions accuracy;  // the test's rule, or the one the check picked for the program

  bool has_program() const { return eager || program_only; }
  const Program& program() const { return eager ? eager->program() : *program_only; }

  bool Failed(std::string failure_class, std::string message) {
    r = Fail(std::move(r), std::move(failure_class), std::move(message));
    return false;
  }
};

bool PreflightProblems(Checking& c, const std::vector<std::string>& problems, const std::string& header);

std::string InputsFrom(const Checking& c);

// EagerAfresh: eager on the check's inputs from the package's own state, under one run's
// deadline (the compiled run's timeout); what it raises is the caller's to read.
void EagerAfresh(const Checking& c) {
  InterpreterOptions o;
  o.deadline = OneRunDeadline(c.options.runner);
  Interpreter::FromArchive(*c.archive, c.r.model, o)->RunTensors(c.inputs);
}

// Stopped: the verdict of an eager or float64 run that did not end: a timeout, as for a
// compiled model that hangs, the case kept; where the compiled model ended, it says so.
bool Stopped(Checking& c, const RunStopped& e) {
  const CompiledOutcome& o = c.r.outcome;
  return c.Failed(Name(FailureClass::kTimeout),
                  c.what + ": " + e.what() +
                      (o.ok() ? ". The compiled model ended (in " + std::to_string(o.seconds) +
                                    " s) where eager did not: there is no reference to judge it by"
                              : std::string("")) +
                      "\n  the inputs: " + InputsFrom(c));
}

// ShippedByThisTorch: a package a team shipped (aoti_prebuilt_package) says which torch
// built it; one whose compiled model calls functions this torch's libtorch lacks cannot be
// loaded here at all, which is said before anything runs (a preflight problem: not the
// compiler's failure, nothing to reduce).
bool ShippedByThisTorch(Checking& c) {
  const auto& m = c.archive->Manifest();
  if (!m || !m->prebuilt) return true;
  const PrebuiltRecord& p = *m->prebuilt;
  const std::string here = p.this_torch.empty() ? m->torch_version : p.this_torch;
  c.r.built_by = (p.built_by.empty() ? "built by a torch the package does not record" +
                                           (p.compiled_against.empty() ? "" : " (compiled against " + p.compiled_against + ")")
                                     : "built by torch " + p.built_by + " (" + p.built_by_from + ")") +
                 "; tested under torch " + here;
  if (p.missing_symbols.empty()) return true;
  return PreflightProblems(c,
                           {"torch " + here + " cannot load the shipped compiled model: it calls " + p.missing_symbols +
                            ", which this torch's libtorch does not have (" + c.r.built_by +
                            "). Test it under the torch that built it, or ship a package built by this one."},
                           " with the shipped package");
}

bool OpenPackage(Checking& c) {
  c.what = c.package + (c.options.model.empty() ? "" : " model '" + c.options.model + "'");
  try {
    c.archive = Pt2Archive::Open(c.package);
    const auto& manifest = c.archive->Manifest();
    if (manifest && manifest->compile.status == "export_error") {
      // No program to run: torch.export failed when the package was built.
      return c.Failed(Name(FailureClass::kExportError), c.what + ": torch.export failed when the package was built (" +
                                          manifest->compile.error_type + "):\n" + manifest->compile.error_message);
    }
    c.r.package_name = c.archive->DisplayName();
    c.r.model = c.archive->ResolveModelName(c.options.model);
    c.what = c.package + " model '" + c.r.model + "'";
    if (c.archive->HasCompiledModel(c.r.model)) c.metadata = c.archive->AotiMetadata(c.r.model);
  } catch (const HarnessError& e) {
    return c.Failed(Name(FailureClass::kHarnessError), e.what());
  }
  return ShippedByThisTorch(c);
}

// PreflightProblems: the preflight's verdict, its problems listed under `header`.
bool PreflightProblems(Checking& c, const std::vector<std::string>& problems, const std::string& header) {
  if (problems.empty()) return true;
  c.r.preflight_problems = problems;
  std::string msg = c.what + ": preflight found " + std::to_string(problems.size()) + " problem(s)" + header + ":";
  for (const auto& p : problems) msg += "\n  " + p;
  return c.Failed(Name(FailureClass::kPreflight), msg);
}

// PreflightHost: the package against this host first. A CUDA package on a host without
// CUDA stops here, before its inputs and weights are placed on a device it lacks.
bool PreflightHost(Checking& c) {
  if (c.metadata.empty()) return true;
  auto it = c.metadata.find("AOTI_DEVICE_KEY");
  if (it != c.metadata.end()) c.device = it->second;
  return PreflightProblems(
      c,
      CheckPackageAgainstHost(c.metadata, DetectHost(), c.archive->Manifest() ? c.archive->Manifest()->cuda_version : ""),
      " with the package on this host (its inputs were not checked)");
}

// QuantizedOperators: the program's quantize and dequantize steps (quantized_decomposed
// operators, as PyTorch's PT2E flow leaves them), counted.
size_t QuantizedOperators(const Program& program) {
  size_t n = 0;
  ForEachNode(program.nodes, [&](const Node& node, const std::string&) {
    if (node.target.rfind("torch.ops.quantized_decomposed.", 0) == 0) ++n;
  });
  return n;
}

// PickAccuracyRule: the test's rule; where the test chose none, a quantized program is
// judged as quantized (SQNR against eager's Q/DQ: the fp64 rule's bound, which scales with
// eager's own float rounding, is no measure for int8 kernels that requantize), and the
// report says so. The rule picked travels with the case (CheckReport::accuracy).
void PickAccuracyRule(Checking& c) {
  c.accuracy = c.options.accuracy;
  if (!c.accuracy.mode_chosen && c.accuracy.mode == AccuracyMode::kFp64Rmse) {
    if (const size_t q = c.has_program() ? QuantizedOperators(c.program()) : 0; q > 0) {
      c.accuracy.mode = AccuracyMode::kSqnr;
      c.r.accuracy_note = "a quantized program (" + std::to_string(q) + " quantize/dequantize steps): judged by SQNR "
                          "against eager, at least " + std::to_string(static_cast<int>(c.accuracy.min_sqnr_db)) +
                          " dB (--aoti_accuracy chooses another rule)";
    }
  }
  c.accuracy.mode_chosen = true;
  c.r.accuracy = c.accuracy;
}

// HoldByRecordings: no eager interpreter; the references are the eager and float64 outputs Python
// recorded when the package was built, which hold the package's sample inputs only. For a
// program with operators written only in Python, where the test asked for a Python child (the
// compiled model runs in that child), and for a package that holds no program (c.not_held:
// the compiled model runs in the runner, as any other).
bool HoldByRecordings(Checking& c, bool python_child) {
  c.held_by_recordings = true;
  c.python_child = python_child;
  std::string imports;
  for (const auto& m : c.options.runner.python_imports) imports += (imports.empty() ? "" : ", ") + m;
  const std::string why = c.not_held.empty() ? "the program calls operators written only in Python"
                                             : "the package holds no program (" + c.not_held + ")";
  if (c.given && !SameValues(*c.given, c.archive->SampleInputsOnCpu())) {
    return c.Failed(Name(FailureClass::kNotSupported),
                    c.what + ": " + why + ", so its references are the eager and float64 outputs Python recorded "
                    "when the package was built, and those hold the package's sample inputs only; " + InputsFrom(c) +
                    " cannot be judged (the harness's eager interpreter cannot run " +
                    (c.not_held.empty() ? "these operators" : "a program it does not have") + "). Nothing is reduced.");
  }
  const auto& manifest = c.archive->Manifest();
  if (!manifest || manifest->eager_outputs.empty()) {
    return c.Failed(Name(FailureClass::kNotSupported),
                    c.what + ": " + why + ", and the package records no eager outputs to judge its compiled model "
                    "by; rebuild it with aoti_package.");
  }
  PickAccuracyRule(c);
  const std::string ran = python_child ? "the compiled model ran in a Python child (importing " + imports + ")"
                                       : "the compiled model ran in the runner";
  c.r.accuracy_note = std::string(c.r.accuracy_note.empty() ? "" : c.r.accuracy_note + "; ") +
                      (c.not_held.empty() ? "held in Python: " : "held without its program: ") + why + ", so " + ran +
                      " and was judged against the eager and float64 outputs Python recorded when the package was "
                      "built; the harness's eager interpreter did not run, and a failure is not reduced" +
                      (c.not_held.empty() ? "" : " (the reducer edits the program, and the package has none)");
  if (!c.has_program()) return true;  // the runner checks the inputs against the compiled model
  return PreflightProblems(c, CheckInputs(c.program(), c.inputs, c.device), "");
}

// How a test asks for a Python child, for a program that calls operators written only in Python.
constexpr char kPythonChildHint[] =
    "A team that serves it from Python checks it with --aoti_python_imports=MODULE (aoti_model_test's python_imports): "
    "the compiled model then runs in a Python child that imports MODULE.";

// HoldWithoutProgram: a package torch's serializer could not write the program of (flex
// attention's block mask, for one; c.not_held says why), which aoti_package wrote with its
// compiled model and Python's recorded references only.
bool HoldWithoutProgram(Checking& c, const PackageManifest& manifest) {
  if (manifest.python_ops.empty()) return HoldByRecordings(c, /*python_child=*/false);
  std::string ops;
  for (const auto& op : manifest.python_ops) ops += (ops.empty() ? "" : ", ") + op.op;
  if (c.options.runner.python_imports.empty()) {
    return c.Failed(Name(FailureClass::kNotSupported),
                    c.what + ": the program calls operators written only in Python (" + ops + "), and the package "
                    "holds no program (" + c.not_held + "). Checked before anything ran: the compiled model cannot run "
                    "in a C++ process, so nothing is judged and nothing is reduced. " + kPythonChildHint);
  }
  return HoldByRecordings(c, /*python_child=*/true);
}

// LoadEager: the inputs and the eager interpreter (custom operators the program calls from
// the test's op libraries unless linked in), then the inputs against the program.
bool LoadEager(Checking& c) {
  try {
    c.inputs = c.given ? *c.given : c.archive->SampleInputs();
    const PackageManifest* manifest = c.archive->Manifest() ? &*c.archive->Manifest() : nullptr;
    if (std::string not_held = c.archive->ProgramNotHeld(c.r.model); !not_held.empty()) {
      c.not_held = std::move(not_held);
      return HoldWithoutProgram(c, *manifest);
    }
    c.program_only = Program::Parse(c.archive->ProgramJson(c.r.model), c.package);
    EnsureOperators(*c.program_only, c.options.runner, manifest ? manifest->python_ops : std::vector<PythonOp>{});
    c.eager = Interpreter::FromArchive(*c.archive, c.r.model);
    c.program_only.reset();  // the interpreter holds the program from here
  } catch (const PythonOnlyOperator& e) {
    if (c.options.runner.python_imports.empty()) {
      return c.Failed(Name(FailureClass::kNotSupported),
                      c.what + ": " + e.what() + ". Checked before anything ran: neither the compiled model nor eager "
                      "can run in a C++ process, so nothing is judged and nothing is reduced. " + kPythonChildHint);
    }
    return HoldByRecordings(c, /*python_child=*/true);
  } catch (const UnsupportedConstruct& e) {
    return c.Failed(Name(FailureClass::kNotSupported), c.what + ": " + e.what() + ". Neither eager nor float64 can be run, so the "
                                                                "compiled model is not judged and nothing is reduced.");
  } catch (const HarnessError& e) {
    return c.Failed(Name(FailureClass::kHarnessError), e.what());
  }
  PickAccuracyRule(c);
  return PreflightProblems(c, CheckInputs(c.program(), c.inputs, c.device), "");
}

// InputsBreakTheProgram: the failure of eager on these inputs when they break an
// assumption the program was exported under (a data-dependent size outside its range);
// "" when eager runs. Asked only of a compiled run that failed: AOTI checks the same ranges
// at run time, and such a failure is the inputs', not the compiler's.
std::string InputsBreakTheProgram(Checking& c) {
  if (c.held_by_recordings) return "";  // no eager here to ask
  bool data_dependent = false;
  for (const auto& [sym, range] : c.eager->program().range_constraints) data_dependent = data_dependent || sym.rfind("u", 0) == 0;
  if (!data_dependent) return "";
  try {
    EagerAfresh(c);
  } catch (const ProgramConstraintError& e) {
    return e.what();
  } catch (const HarnessError& e) {
    const std::string what = e.what();
    // The program's own runtime assertions (aten._assert_scalar on a data-dependent size).
    if (what.find("Runtime assertion failed") != std::string::npos) return what;
  }
  return "";
}

// InputsFrom: where the check's inputs came from, in words.
std::string InputsFrom(const Checking& c) {
  if (!c.options.inputs_from.empty()) return c.options.inputs_from;
  return c.given ? "the inputs given to the check" : "the package's sample inputs";
}

// EagerFailsToo: the operator's own error when eager, run on the same inputs from the
// package's state, fails where the compiled model did; "" when eager runs them. An error of
// the harness's own (not an operator's) is not eager's and is left to the eager step.
std::string EagerFailsToo(Checking& c) {
  if (c.held_by_recordings) return "";
  try {
    EagerAfresh(c);
  } catch (const OperatorError& e) {
    return e.what();
  } catch (const HarnessError&) {
  }
  return "";
}

// EagerHangsToo: where the compiled model of a program with a while_loop did not end, whether
// eager ends on the same inputs (under the same timeout): its RunStopped message when it does
// not either; "" when it ends, fails otherwise, or is not asked.
std::string EagerHangsToo(Checking& c) {
  // Only a while_loop can run on without end between the interpreter's deadline checks; an
  // operator that hangs (a custom op that never returns) would hang this process with it, so a
  // program that calls one is not run here.
  if (c.held_by_recordings) return "";
  bool loop = false, foreign = false;
  ForEachNode(c.eager->program().nodes, [&](const Node& node, const std::string&) {
    const std::string& t = node.target;
    loop = loop || t == "torch.ops.higher_order.while_loop";
    foreign = foreign || !(t.rfind("torch.ops.aten.", 0) == 0 || t.rfind("torch.ops.higher_order.", 0) == 0 ||
                           t.rfind("torch.ops.prims.", 0) == 0 || t.rfind("_operator.", 0) == 0 ||
                           t.rfind("torch.ops.quantized_decomposed.", 0) == 0);
  });
  if (!loop || foreign) return "";
  try {
    EagerAfresh(c);
  } catch (const RunStopped& e) {
    return e.what();
  } catch (const HarnessError&) {
  }
  return "";
}

bool RunCompiledModel(Checking& c) {
  RunnerOptions runner = c.options.runner;
  runner.python_child = c.python_child;
  c.r.outcome = RunCompiled(AbsolutePath(c.package), c.r.model, c.inputs, runner);
  const CompiledOutcome& o = c.r.outcome;
  if (o.ok()) return true;
  if (o.kind == OutcomeKind::kRuntimeError || o.kind == OutcomeKind::kSignal) {
    if (const std::string broken = InputsBreakTheProgram(c); !broken.empty()) {
      return PreflightProblems(c, {"the inputs break the program's own assumptions: eager fails too: " + broken +
                                   " (the compiled model: " + o.Summary().substr(0, 300) + ")"},
                               "");
    }
    // Only after an error the compiled model raised: eager runs in this process, and a model that
    // killed its child may kill this one too.
    if (const std::string eager = o.kind == OutcomeKind::kRuntimeError ? EagerFailsToo(c) : ""; !eager.empty()) {
      const bool sample = !c.given || SameValues(*c.given, c.archive->SampleInputsOnCpu());
      if (sample) {
        // Python eager ran these very inputs when the package was built.
        return c.Failed(Name(FailureClass::kHarnessDisagreement),
                        c.what + ": the harness' eager interpreter fails on the package's sample inputs, which Python "
                                 "eager ran when the package was built, at " + eager +
                            ". The failure is the harness', not AOTI's: nothing is judged or reduced. Please report it "
                            "to aoti_harness with the package.");
      }
      return c.Failed(Name(FailureClass::kInvalidInputs),
                      c.what + ": these inputs are invalid for the model: eager fails on them too, so the compiled "
                               "model's failure is not a compiler bug and nothing is reduced.\n  eager: " + eager +
                          "\n  the compiled model: " + o.Summary().substr(0, 300) + "\n  the inputs: " + InputsFrom(c));
    }
  }
  // A compiled model that did not end where eager does not end either (a loop whose condition
  // the inputs never make false): the model's, not the compiler's.
  if (o.kind == OutcomeKind::kTimeout) {
    if (const std::string hangs = EagerHangsToo(c); !hangs.empty()) {
      return c.Failed(Name(FailureClass::kInvalidInputs),
                      c.what + ": the model does not end on these inputs: eager does not end either, so the "
                               "compiled model's timeout is not a compiler bug and nothing is reduced.\n  eager: " +
                          hangs + "\n  the compiled model: " + o.Summary().substr(0, 300) + "\n  the inputs: " +
                          InputsFrom(c));
    }
  }
  // A shipped package's failure to run says which torch built it and which runs it.
  const std::string shipped = c.r.built_by.empty() ? "" : "\n  the shipped package: " + c.r.built_by;
  if (o.kind == OutcomeKind::kSignal) {
    return c.Failed(o.Summary().substr(0, o.Summary().find(" (")), c.what + ": " + o.message + shipped);
  }
  return c.Failed(OutcomeKindName(o.kind), c.what + ": the compiled model failed: " + o.Summary() + shipped);
}

// RunEager: eager twice, to see whether the model itself is random (a second run only where
// the first left the program's state as it found it).
bool RunEager(Checking& c, const std::vector<std::string>& random_nodes, std::vector<at::Tensor>* eager_out) {
  const Program& program = c.eager->program();
  const int64_t seed = c.options.runner.seed;
  std::vector<at::Tensor> again;
  try {
    if (seed >= 0) at::manual_seed(static_cast<uint64_t>(seed));
    c.eager->SetDeadline(OneRunDeadline(c.options.runner));
    *eager_out = c.eager->RunTensors(c.inputs);
    if (!MutatesState(program)) {
      if (seed >= 0) at::manual_seed(static_cast<uint64_t>(seed));
      c.eager->SetDeadline(OneRunDeadline(c.options.runner));
      again = c.eager->RunTensors(c.inputs);
    }
  } catch (const RunStopped& e) {
    return Stopped(c, e);
  } catch (const ProgramConstraintError& e) {
    return PreflightProblems(c, {std::string("the inputs break the program's own assumptions: ") + e.what()}, "");
  } catch (const OperatorError& e) {
    if (!c.given || SameValues(*c.given, c.archive->SampleInputsOnCpu())) {
      return c.Failed(Name(FailureClass::kHarnessError), c.what + ": the eager interpreter failed on the package's "
                                                                  "sample inputs, which Python eager ran: " + e.what());
    }
    return c.Failed(Name(FailureClass::kInvalidInputs),
                    c.what + ": these inputs are invalid for the model: eager fails on them (the compiled model ran "
                             "them without a word), so nothing is judged and nothing is reduced.\n  eager: " +
                        std::string(e.what()) + "\n  the inputs: " + InputsFrom(c));
  } catch (const HarnessError& e) {
    return c.Failed(Name(FailureClass::kHarnessError), c.what + ": the eager interpreter failed: " + e.what());
  }
  size_t differs = 0;
  double by = 0;
  const bool varies = !again.empty() && !SameValues(*eager_out, again, &differs, &by);
  if (!varies && !(!random_nodes.empty() && seed < 0 && again.empty())) return true;
  c.r.random_nodes = random_nodes;
  const auto names = program.Signature().user_outputs;
  std::string ops;
  for (const auto& n : random_nodes) ops += (ops.empty() ? "" : ", ") + n;
  return c.Failed(
      Name(FailureClass::kNondeterministic),
      c.what + ": the model is random" + (ops.empty() ? std::string("") : ": it draws random numbers in " + ops) +
          (varies ? std::string(ops.empty() ? "" : ";") + " two eager runs on the same inputs" +
                        (seed >= 0 ? " seeded alike" : "") + " differ at output " + std::to_string(differs) + " '" +
                        (differs < names.size() ? names[differs] : "?") + "' by up to " + std::to_string(by)
                  : std::string("")) +
          ". Eager, float64 and the compiled model draw other numbers, so no rule can judge it, and it is "
          "not reduced. To check it, compile it with inductor_configs {\"fallback_random\": \"true\"} and seed "
          "the check (--aoti_seed=0): the compiled model and eager then draw the same numbers.");
}

// AgreesWithRecorded: Python eager, recorded when the package was built, is a second
// reference for the interpreter on the sample inputs: where they disagree the failure is
// the harness', not AOTI's.
bool AgreesWithRecorded(Checking& c, const std::vector<at::Tensor>& eager_out) {
  const auto& manifest = c.archive->Manifest();
  if (!manifest || manifest->eager_outputs.empty() || manifest->eager_outputs.size() != eager_out.size() ||
      (c.given && !SameValues(*c.given, c.archive->SampleInputsOnCpu()))) {
    return true;
  }
  std::string disagreement;
  try {
    disagreement =
        DisagreementWithRecorded(eager_out, c.archive->RecordedEagerOutputs(), c.eager->program().Signature().user_outputs);
  } catch (const HarnessError& e) {
    disagreement = std::string("the recorded outputs cannot be read: ") + e.what();
  }
  if (disagreement.empty()) return true;
  return c.Failed(Name(FailureClass::kHarnessDisagreement),
                  c.what + ": the harness' eager interpreter disagrees with the Python eager outputs the package "
                           "recorded when it was built, at " + disagreement +
                      ". The failure is the harness', not AOTI's: nothing is judged or reduced. Please report it to "
                      "aoti_harness with the package.");
}

// RunFp64: only the float64 RMSE rule needs a float64 run. When it fails, the rule falls
// back to eager as the reference, as upstream's same_two_models does, and the report says
// so. A seeded random model has none: float64 draws other numbers even seeded alike.
std::vector<at::Tensor> RunFp64(Checking& c, bool seeded_random) {
  if (c.accuracy.mode != AccuracyMode::kFp64Rmse) return {};
  if (seeded_random) {
    c.r.fp64_note = "no float64 reference (the model draws random numbers, and a float64 run draws others even seeded "
                    "alike); judged against eager, seeded alike";
    return {};
  }
  try {
    InterpreterOptions o64;
    o64.fp64 = true;
    o64.deadline = OneRunDeadline(c.options.runner);  // one that does not end: no float64 reference, said in the note
    // On the package's device where it computes in float64 (the CPU, CUDA), else on the
    // CPU; the report says which.
    const c10::Device run_on = c.inputs.empty() || !c.inputs[0].defined() ? c10::Device(c10::kCPU) : c.inputs[0].device();
    if (!SupportsFloat64(run_on.type())) o64.device = "cpu";
    c.r.fp64_device = o64.device.empty() ? run_on.str() : o64.device;
    return Interpreter::FromArchive(*c.archive, c.r.model, o64)->RunTensors(c.inputs);
  } catch (const HarnessError& e) {
    c.r.fp64_note = std::string("no float64 reference (the float64 run failed: ") + e.what() +
                    "); judged against eager, as upstream does";
    return {};
  }
}

// References: eager and float64, from the first run of a check (kept in `refs` for its
// reruns, which run only the compiled model again).
bool MakeReferences(Checking& c, const std::vector<std::string>& random_nodes, bool seeded_random, References* refs) {
  if (refs->valid) {
    c.r.fp64_note = refs->fp64_note;
    c.r.fp64_device = refs->fp64_device;
    return true;
  }
  if (c.held_by_recordings) {
    // Python's own runs, recorded when the package was built (on these very inputs).
    std::vector<at::Tensor> eager_out = c.archive->RecordedEagerOutputs(), fp64_out;
    if (c.accuracy.mode == AccuracyMode::kFp64Rmse) {
      fp64_out = c.archive->RecordedEagerFp64Outputs();
      if (fp64_out.size() != eager_out.size()) {
        c.r.fp64_note = "no float64 reference (the package records none: Python's float64 run failed when it was "
                        "built); judged against eager, as upstream does";
        fp64_out.clear();
      }
    }
    fp64_out.resize(eager_out.size());
    *refs = References{true, eager_out, fp64_out, c.r.fp64_note, c.r.fp64_device};
    return true;
  }
  std::vector<at::Tensor> eager_out;
  if (!RunEager(c, random_nodes, &eager_out)) return false;
  if (random_nodes.empty() && !AgreesWithRecorded(c, eager_out)) return false;
  std::vector<at::Tensor> fp64_out = RunFp64(c, seeded_random);
  fp64_out.resize(eager_out.size());  // undefined: no float64 reference for that output
  *refs = References{true, eager_out, fp64_out, c.r.fp64_note, c.r.fp64_device};
  return true;
}

// Judge: the verdict, output by output, by the test's rule.
bool Judge(Checking& c, const References& refs, bool seeded_random) {
  const std::vector<at::Tensor>& eager_out = refs.eager;
  const std::vector<at::Tensor>& fp64_out = refs.fp64;
  const auto& got = c.r.outcome.outputs;
  if (got.size() != eager_out.size()) {
    return c.Failed(Name(FailureClass::kAccuracy), c.what + ": the compiled model returned " + std::to_string(got.size()) +
                                    " outputs, eager returned " + std::to_string(eager_out.size()));
  }
  std::vector<std::string> sig;
  if (c.has_program()) {
    sig = c.program().Signature().user_outputs;
  } else if (c.archive->Manifest()) {  // the names Python recorded eager's outputs under
    for (const auto& t : c.archive->Manifest()->eager_outputs) sig.push_back(t.name);
  }
  const AccuracyOptions& accuracy = c.accuracy;
  std::string failures, unjudged;
  size_t failed = 0;
  const size_t judged = c.options.judged_outputs ? std::min(c.options.judged_outputs, got.size()) : got.size();
  for (size_t i = 0; i < judged; ++i) {
    TensorComparison cmp;
    try {
      cmp = CompareOutputs(got[i], eager_out[i], fp64_out[i], accuracy);
    } catch (const std::exception& e) {  // c10::Error from a comparison op (a bad tolerance, ...)
      return c.Failed(Name(FailureClass::kHarnessError), c.what + ": comparing output " + std::to_string(i) + " failed: " + e.what());
    }
    const std::string output = "\n  output " + std::to_string(i) + " '" + (i < sig.size() ? sig[i] : "?") + "' (" +
                               DescribeTensor(eager_out[i]) + "): ";
    if (!cmp.pass) {
      ++failed;
      std::string detail = DescribeComparison(cmp, accuracy);
      for (size_t p = detail.find('\n'); p != std::string::npos; p = detail.find('\n', p + 3)) detail.replace(p, 1, "\n  ");
      failures += output + detail;
    } else if (double relative = 0; PassedOnAnUnreliableReference(cmp, fp64_out[i], &relative)) {
      unjudged += output + "eager is " + std::to_string(static_cast<int>(relative * 100 + 0.5)) +
                  "% from float64 (relative RMSE), far beyond what its dtype's rounding explains; the RMSE bound " +
                  std::to_string(cmp.bound) + " would let any compiled output of that scale pass (max |compiled-eager| " +
                  std::to_string(cmp.max_abs_diff) + ")";
    }
    c.r.comparisons.push_back(std::move(cmp));
  }
  if (failed) {
    return c.Failed(
        Name(FailureClass::kAccuracy),
        c.what + ": " + std::to_string(failed) + " of " + std::to_string(judged) + " outputs differ from eager under " +
            AccuracyModeName(accuracy.mode) + " accuracy" +
            (c.r.fp64_device.empty() || c.r.fp64_device == "cpu" ? "" : " (float64 reference on " + c.r.fp64_device + ")") +
            failures + (c.r.fp64_note.empty() ? "" : "\n  " + c.r.fp64_note) +
            (c.r.accuracy_note.empty() ? "" : "\n  " + c.r.accuracy_note) +
            (seeded_random && !FallbackRandom(*c.archive)
                 ? "\n  the model draws random numbers, and its package was not compiled with fallback_random=True: "
                   "its compiled model draws with inductor's own generator, not eager's"
                 : ""));
  }
  if (!unjudged.empty()) {
    return c.Failed(Name(FailureClass::kUnreliableReference),
                    c.what + ": the float64 reference cannot judge these outputs, so they do not pass on it:" + unjudged +
                        "\n  Judge them against eager with a tolerance that fits (--aoti_accuracy=strict "
                        "--aoti_tolerance=...), or find why eager is so far from float64 (an ill-conditioned op, a cast "
                        "to a low precision that the float64 run keeps).");
  }
  return true;
}

// CheckOnce: the four steps (preflight, the compiled model, eager and float64, the
// verdict), with one compiled run; with `refs` already filled, the compiled run is judged
// by them, else they are filled.
CheckReport CheckOnce(const std::string& package, const std::vector<at::Tensor>* given, const CheckOptions& options,
                      References* refs) {
  Checking c{package, given, options};
  if (!OpenPackage(c) || !PreflightHost(c) || !LoadEager(c) || !RunCompiledModel(c)) return std::move(c.r);
  const std::vector<std::string> random_nodes = c.has_program() ? RandomNodes(c.program()) : std::vector<std::string>{};
  const bool seeded_random = !random_nodes.empty() && options.runner.seed >= 0;
  if (!MakeReferences(c, random_nodes, seeded_random, refs)) return std::move(c.r);
  if (options.keep_values) {
    c.r.eager_outputs = refs->eager;
    c.r.fp64_outputs = refs->fp64;
  }
  if (!Judge(c, *refs, seeded_random)) return std::move(c.r);
  c.r.pass = true;
  return std::move(c.r);
}

// Rerunnable: a failure of the compiled run that a run again may not repeat. Not a timeout
// (a rerun would take as long again), nor a verdict made before or without the compiled run.
bool Rerunnable(const std::string& failure_class) {
  return Is(failure_class, FailureClass::kAccuracy) || Is(failure_class, FailureClass::kRuntimeError) ||
         Is(failure_class, FailureClass::kSignal);
}

// Guarded: CheckOnce, where anything it raises (a library's own exception from a program
// that parses but is wrong) is a failing check that says so, never the end of the test.
CheckReport Guarded(const std::string& package, const std::vector<at::Tensor>* given, const CheckOptions& options,
                    References* refs) {
  try {
    return CheckOnce(package, given, options, refs);
  } catch (const std::exception& e) {
    return Fail(CheckReport{}, Name(FailureClass::kHarnessError),
                package + ": the check stopped on an unexpected error (a malformed package, or a bug in "
                          "aoti_harness): " + e.what());
  } catch (...) {
    return Fail(CheckReport{}, Name(FailureClass::kHarnessError), package + ": the check stopped on an unknown exception");
  }
}

}  // namespace

CheckReport CheckAotiMatchesEager(const std::string& package, const std::vector<at::Tensor>* given,
                                  const CheckOptions& options) {
  References refs;
  CheckReport first = Guarded(package, given, options, &refs);
  if (!first.pass && !Rerunnable(first.failure_class)) return first;
  // A pass holds for `votes` runs; a failure is run `reruns` more times for its rate.
  const int more = first.pass ? options.votes - 1 : options.reruns;
  if (more <= 0) {
    first.runs_failed = first.pass ? 0 : 1;
    return first;
  }
  CheckReport verdict = std::move(first);
  int runs = 1, failed = verdict.pass ? 0 : 1;
  for (int i = 0; i < more; ++i) {
    CheckReport again = Guarded(package, given, options, &refs);
    ++runs;
    if (!again.outcome.outputs.empty() && !verdict.outcome.outputs.empty()) {
      size_t at = 0;
      double by = 0;
      if (!SameValues(again.outcome.outputs, verdict.outcome.outputs, &at, &by)) verdict.outputs_vary = true;
    }
    if (verdict.pass) {
      // Voting: the first failing run decides.
      if (!again.pass && Rerunnable(again.failure_class)) {
        again.outputs_vary = verdict.outputs_vary;
        verdict = std::move(again);
        failed = 1;
        break;
      }
      continue;
    }
    if (!again.pass && again.failure_class == verdict.failure_class) ++failed;
  }
  verdict.runs = runs;
  verdict.runs_failed = failed;
  if (verdict.pass) return verdict;
  if (failed < runs) {
    verdict.flaky = true;
    verdict.message += "\n  flaky: it failed " + std::to_string(failed) + " of " + std::to_string(runs) +
                       " runs of the compiled model on the same inputs" +
                       (verdict.outputs_vary ? " (its outputs differ from run to run)" : "") +
                       "; a reduction of it votes: a candidate fails when any of " +
                       std::to_string(VotesFor(failed, runs)) + " runs fails";
  } else if (verdict.outputs_vary) {
    verdict.message += "\n  it failed all " + std::to_string(runs) +
                       " runs on the same inputs, and the compiled model's outputs differ from run to run";
  }
  return verdict;
}

}  // namespace aoti
