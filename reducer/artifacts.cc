#include "reducer/artifacts.h"

#include <fcntl.h>
#include <stdio.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include <glog/logging.h>
#include <nlohmann/json.hpp>

#include "harness/case/case_file.h"
#include "harness/util/errors.h"
#include "harness/util/json_util.h"
#include "harness/util/subprocess.h"
#include "harness/archive/pt2_archive.h"
#include "harness/archive/tensor_bundle.h"
#include "harness/archive/tensor_io.h"
#include "harness/util/temp_dir.h"
#include "reducer/graph_edit.h"
#include "reducer/source_text.h"
#include "reducer/report_html.h"
#include "harness/triage/triage.h"

namespace aoti {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string ArgText(const json& arg) {
  if (!arg.is_object() || arg.size() != 1) return JsonText(arg);
  const std::string& key = arg.begin().key();
  const json& v = arg.begin().value();
  if (key == "as_tensor") return "%" + v.at("name").get<std::string>();
  if (key == "as_none") return "None";
  if (key == "as_graph") return "<" + v.value("name", "subgraph") + ">";
  std::vector<std::string> names;
  ArgumentValueNames(arg, &names);
  if (!names.empty()) {
    std::string s = "[";
    for (size_t i = 0; i < names.size(); ++i) s += (i ? ", %" : "%") + names[i];
    return s + "]";
  }
  return JsonText(v);
}

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string Py(const std::string& text) { return StringLiteral(text, SourceLanguage::kPython); }
std::string Starlark(const std::string& text) { return StringLiteral(text, SourceLanguage::kStarlark); }

// ReproPy: repro.py, standalone: its template (reducer/repro/repro_template.py) with the
// header and the case written in. It judges by the check options the test ran with
// (`options_json`, CheckOptionsToJson's object with op libraries relative to the repro
// directory): the same rule, tolerances, judged outputs, seed, runner environment and
// timeout.
constexpr const char kReproTemplate[] =
#include "reducer/repro/repro_template.inc"
    ;
// The harness's own inductor_configs keys, applied (tools/aoti_aten_fallbacks.py): written
// beside repro.py, which imports it.
constexpr const char kAtenFallbacksModule[] =
#include "reducer/repro/aoti_aten_fallbacks.inc"
    ;
constexpr const char kTemplateHeader[] =
    "# aoti_harness repro (the template: reducer/artifacts.cc writes the header and the case).\n#\n";
constexpr const char kCaseBegin[] = "# --- the case: written per repro by aoti_harness (reducer/artifacts.cc) ---\n";
constexpr const char kCaseEnd[] = "# --- end of the case ---\n";

std::string ReproPy(const ReduceResult& r, const std::string& options_json, const std::string& check_str,
                    const std::string& env, const std::string& device) {
  std::ostringstream header;
  header << "# aoti_harness repro: " << CommentLine(r.failure_class) << ", reduced from " << r.nodes_before << " to "
         << r.nodes_after << " nodes.\n#\n# Minimal graph:\n"
         << CommentBlock(FormatGraph(r.minimal), "#   ") << "#\n"
         << CommentBlock(env, "# ") << "#\n";
  std::ostringstream c;
  c << kCaseBegin << "FAILURE_CLASS = " << Py(r.failure_class) << "\n"
    << "CHECK_STR = " << Py(check_str) << "\n"
    << "INDUCTOR_CONFIGS = json.loads(" << Py(r.inductor_configs_json) << ")\n"
    << "# The model inside repro.pt2.\n"
    << "MODEL = " << Py(r.model) << "\n"
    << "# The check options the failing test ran with (its case.json's check_options): the repro\n"
    << "# judges by the same rule, tolerances, outputs and seed, and runs the compiled model as it did.\n"
    << "OPTIONS = json.loads(" << Py(options_json) << ")\n"
    << "# The device the program, its weights and its inputs are on (the compiled model's).\n"
    << "DEVICE = " << Py(device) << "\n"
    << "# The accuracy modes as the check options spell them, and the harness's bound of a\n"
    << "# reliable float64 reference (harness/check/accuracy_rule.h).\n"
    << "FP64, STRICT, ASSERT_CLOSE, SQNR = " << Py(AccuracyModeName(AccuracyMode::kFp64Rmse)) << ", "
    << Py(AccuracyModeName(AccuracyMode::kStrict)) << ", " << Py(AccuracyModeName(AccuracyMode::kAssertClose)) << ", "
    << Py(AccuracyModeName(AccuracyMode::kSqnr)) << "\n"
    << "UNRELIABLE_REFERENCE = " << kUnreliableReference << "\n"
    << kCaseEnd;
  std::string py = kReproTemplate;
  const size_t h = py.find(kTemplateHeader), begin = py.find(kCaseBegin), end = py.find(kCaseEnd);
  if (h == std::string::npos || begin == std::string::npos || end == std::string::npos || end < begin) {
    throw ReducerError("repro.py's template has lost its header or case markers (reducer/repro/repro_template.py)");
  }
  py.replace(begin, end + std::strlen(kCaseEnd) - begin, c.str());
  py.replace(h, std::strlen(kTemplateHeader), header.str());
  return py;
}

}  // namespace

namespace {

// FormatNodes: one line per node; a higher-order op's subgraphs after it, indented, with
// their inputs and what they return.
void FormatNodes(std::ostream& os, const std::vector<Node>& nodes, const std::string& indent) {
  for (const auto& n : nodes) {
    const auto outs = NodeOutputNames(n);
    std::string lhs;
    for (size_t i = 0; i < outs.size(); ++i) lhs += (i ? ", %" : "%") + outs[i];
    os << indent << (lhs.empty() ? "" : lhs + " = ") << ShortTarget(n.target) << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      os << (i ? ", " : "") << (n.inputs[i].kind == 2 ? n.inputs[i].name + "=" : "") << ArgText(n.inputs[i].arg);
    }
    os << ")";
    const auto path = n.metadata.find(kPathKey);
    if (path != n.metadata.end()) os << "  # from " << path->second;
    os << "\n";
    for (size_t i : SubgraphArgs(n)) {
      const Graph g = ParseSubgraph(n, i, "node '" + n.name + "'");
      os << indent << "  " << g.name << "(";
      for (size_t k = 0; k < g.inputs.size(); ++k) os << (k ? ", " : "") << ArgText(g.inputs[k]);
      os << "):\n";
      FormatNodes(os, g.nodes, indent + "    ");
      os << indent << "    return (";
      for (size_t k = 0; k < g.outputs.size(); ++k) os << (k ? ", " : "") << ArgText(g.outputs[k]);
      os << ")\n";
    }
  }
}

}  // namespace

std::string FormatGraph(const Program& program) {
  std::ostringstream os;
  for (const auto& s : program.input_specs) {
    if (s.kind != InputKind::kUserInput || s.value_name.empty()) continue;
    auto it = program.tensor_values.find(s.value_name);
    os << "%" << s.value_name << ": input";
    if (it != program.tensor_values.end()) {
      os << " " << ScalarTypeName(it->second.dtype) << "[";
      for (size_t i = 0; i < it->second.sizes.size(); ++i) {
        const auto& d = it->second.sizes[i];
        os << (i ? ", " : "") << (d.is_symbolic() ? d.sym : std::to_string(d.size));
      }
      os << "]";
    }
    os << "\n";
  }
  FormatNodes(os, program.nodes, "");
  os << "return (";
  bool first = true;
  for (const auto& s : program.output_specs) {
    if (s.kind != OutputKind::kUserOutput) continue;
    os << (first ? "" : ", ") << (s.value_name.empty() ? JsonText(s.arg) : "%" + s.value_name);
    first = false;
  }
  os << ")\n";
  return os.str();
}

std::string EnvironmentHeader(const std::string& package) {
  std::ostringstream os;
  try {
    auto archive = Pt2Archive::Open(package);
    if (const auto& m = archive->Manifest()) {
      os << "torch " << m->torch_version << " (git " << m->torch_git_version << ")\n";
    }
    const std::string model = archive->ResolveModelName("");
    if (archive->HasCompiledModel(model)) {
      const auto md = archive->AotiMetadata(model);
      auto get = [&](const char* k) { auto it = md.find(k); return it == md.end() ? std::string("?") : it->second; };
      os << "AOTI device " << get("AOTI_DEVICE_KEY") << ", CPU ISA " << get("AOTI_CPU_ISA") << ", "
         << get("AOTI_PLATFORM") << " " << get("AOTI_MACHINE") << "\n";
    }
  } catch (const HarnessError&) {
  }
  const char* cxx = std::getenv("CXX");
  os << "compiler: " << FirstLine(CommandOutput(std::string(cxx && *cxx ? cxx : "g++") + " --version")) << "\n";
  os << "CPU: " << CommandOutput("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'") << "\n";
  const std::string nvcc = CommandOutput("nvcc --version | tail -n 2 | head -n 1");
  os << "nvcc: " << (nvcc.empty() ? "not found" : nvcc) << "\n";
  const std::string gpus = CommandOutput("nvidia-smi -L");
  os << "GPUs: " << (gpus.empty() ? "none" : gpus) << "\n";
  return os.str();
}

// ShippedNote: for an original brought in as shipped (aoti_prebuilt_package), where it came
// from and what the candidates were compiled with; "" otherwise.
static std::string ShippedNote(const Pt2Archive& original, const std::string& configs_json) {
  const auto& m = original.Manifest();
  if (!m || !m->prebuilt) return "";
  return "The original is a package as its team shipped it: `" + m->prebuilt->package + "` (sha256 " +
         m->prebuilt->sha256 + "), its compiled model run as shipped; the program from " + m->prebuilt->program +
         ", the inputs from " + m->prebuilt->inputs + ". The candidates were compiled here with inductor_configs `" +
         configs_json + "`.\n\n";
}

// Messages name the reducer's temporary candidate archive; in the artifacts it is repro.pt2.
static std::string WithReproPath(std::string message, const std::string& archive) {
  if (archive.empty()) return message;
  for (size_t p = message.find(archive); p != std::string::npos; p = message.find(archive, p)) {
    message.replace(p, archive.size(), "repro.pt2");
  }
  return message;
}

std::string CulpritText(const ReduceResult& r) {
  const std::string where = r.culprit_path.empty() ? r.culprit : r.culprit_path;
  if (where.empty()) return "";
  const std::string op = CulpritOperator(r.minimal, where);
  return op.empty() ? where : where + " (" + op + ")";
}

namespace {

// WriteArtifactSet writes the whole set into `out_dir`, or, when `full` is false, the
// essentials only (no checkpoints, no copy of the original: case.json then points at
// the original where it is), with report.md and summary.json saying what was left out
// and why (`not_written`).
// SameContents: the two files hold the same bytes (false when either cannot be read).
bool SameContents(const std::string& a, const std::string& b) {
  std::error_code ec;
  const auto size = fs::file_size(a, ec);
  if (ec || fs::file_size(b, ec) != size || ec) return false;
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  std::vector<char> ba(1 << 20), bb(1 << 20);
  while (fa && fb) {
    fa.read(ba.data(), ba.size());
    fb.read(bb.data(), bb.size());
    if (fa.gcount() != fb.gcount() || std::memcmp(ba.data(), bb.data(), fa.gcount()) != 0) return false;
  }
  return fa.eof() && fb.eof();
}

// ReproBuild: the Bazel form of the repro (BUILD.bazel): the same program, configs, model
// name and op libraries, judged by the same options (check_options.json).
std::string ReproBuild(const ReduceResult& r, const json& options_json, const std::string& device) {
  std::string libraries;
  for (const auto& lib : options_json.at("runner").at("op_libraries")) {
    libraries += (libraries.empty() ? "" : ", ") + Starlark(lib.get<std::string>());
  }
  // The modules of the program's pytree types the test declared: packaging repro.pt2 reads
  // its program, and imports only these (the test reads them from check_options.json).
  std::string pytree_modules;
  for (const auto& m : options_json.at("runner").value("pytree_modules", json::array())) {
    pytree_modules += (pytree_modules.empty() ? "" : ", ") + Starlark(m.get<std::string>());
  }
  std::ostringstream build;
  build << "# The reducer's repro as a harness test: bazel test :repro_test (it fails while the bug is there).\n"
        << "load(\"@aoti_harness//harness:defs.bzl\", \"aoti_model_test\", \"aoti_package\")\n\n"
        << "aoti_package(\n    name = \"repro\",\n    program = \"repro.pt2\",\n"
        << "    model_name = " << Starlark(r.model) << ",\n    inductor_configs = "
        << StarlarkConfigs(json::parse(r.inductor_configs_json)) << ",\n";
  if (!libraries.empty()) build << "    op_libraries = [" << libraries << "],\n";
  if (!pytree_modules.empty()) build << "    pytree_modules = [" << pytree_modules << "],\n";
  // A GPU repro builds and runs only with a GPU: tagged so that a build without one
  // leaves it out (the harness' .bazelrc; bazel test --config=cuda runs it).
  const std::string tags = device == "cpu" ? "" : "    tags = [\"requires-gpu\"],\n";
  build << tags << ")\n\naoti_model_test(\n    name = \"repro_test\",\n    srcs = [\"repro_test.cc\"],\n"
        << "    package = \":repro\",\n    data = [\"check_options.json\"],\n"
        << "    args = [\"--aoti_check_options=$(rootpath check_options.json)\"],\n";
  if (!libraries.empty()) build << "    op_libraries = [" << libraries << "],\n";
  build << tags << ")\n";
  return build.str();
}

std::string ReproTestCc(const ReduceResult& r) {
  return "// aoti_harness repro: " + CommentLine(r.failure_class) + ", " + std::to_string(r.nodes_after) +
         " nodes. Minimal graph:\n" + CommentBlock(FormatGraph(r.minimal), "//   ") +
         "#include <gtest/gtest.h>\n\n#include \"matchers/aoti_matches_eager.h\"\n\n"
         "TEST(AotiRepro, CompiledMatchesEager) { EXPECT_AOTI_MATCHES_EAGER(aoti::PackageUnderTest()); }\n";
}

// RemoteCacheRows: the remote compile cache's rows of the figures, none without one.
std::string RemoteCacheRows(const ReduceResult& r) {
  if (r.remote_cache.empty()) return "";
  return "| of them, from the remote cache (" + r.remote_cache + ") | " + std::to_string(r.remote_cache_hits) +
         " |\n| compiles uploaded to the remote cache | " + std::to_string(r.remote_cache_stores) + " |\n" +
         (r.remote_cache_problem.empty() ? ""
                                         : "| remote cache left for this run | " + r.remote_cache_problem + " |\n");
}

// FiguresMarkdown: report.md's table of figures.
std::string FiguresMarkdown(const ReduceResult& r, const ReduceSpec& spec) {
  std::ostringstream md;
  md << "## Figures\n\n| what | value |\n| --- | --- |\n"
     << "| nodes before | " << r.nodes_before << " |\n| nodes after | " << r.nodes_after << " |\n"
     << "| compiles | " << r.compiles << " |\n| compile servers (--jobs) | " << r.jobs << " |\n"
     << "| compiled ahead on the pool, never needed (in compiles) | " << r.speculative_compiles << " |\n"
     << "| cache hits | " << r.cache_hits << " |\n"
     << "| compiles served by the disk cache (earlier runs) | " << r.disk_cache_hits
     << (r.compile_cache_dir.empty() ? " (no disk cache" + (r.compile_cache_why.empty() ? "" : ": " + r.compile_cache_why) + ")"
                                     : " (" + r.compile_cache_dir + ")")
     << " |\n"
     << RemoteCacheRows(r) << "| runs | " << r.runs << " |\n| wall time | " << r.seconds << " s |\n"
     << "| compile time | " << r.compile_seconds << " s |\n| flaky candidates rejected | " << r.flaky << " |\n"
     << "| final result failed again on re-check | " << RecheckText(r) << " |\n"
     << "| time budget spent | " << BudgetText(r) << " |\n"
     << (r.hang_timeout_s > 0 ? "| a run counts as hanging after (repro and candidates) | " +
                                    std::to_string(static_cast<int>(r.hang_timeout_s)) + " s (the test's own: " +
                                    std::to_string(static_cast<int>(spec.check.runner.timeout_s)) + " s) |\n"
                              : std::string())
     << "\n";
  return md.str();
}

// ReportMarkdown: report.md, the repro in words and tables.
std::string ReportMarkdown(const ReduceResult& r, const ReduceSpec& spec, const Pt2Archive& original,
                           const std::string& env, const std::vector<std::string>& not_written) {
  std::ostringstream md;
  md << "# AOTI repro: " << r.failure_class << "\n\n"
     << "Reduced `" << ShownPackage(r, spec) << "` from **" << r.nodes_before << "** to **" << r.nodes_after << "** nodes"
     << (r.culprit.empty() ? std::string(".") : "; the culprit is `" + r.culprit_path + "`.") << " A page of it: `report.html`.\n\n"
     << ShippedNote(original, r.inductor_configs_json)
     << "## Failure\n\n```\n" << WithReproPath(r.message, r.final_archive) << "\n```\n\n"
     << "## Environment\n\n```\n" << env << "```\n\n"
     << "## Minimal graph\n\n```\n" << FormatGraph(r.minimal) << "```\n\n";
  md << "## Weights\n\n`repro.pt2` holds " << r.weights_note << "."
     << (r.weights == "random" ? " `checkpoints/` and `original.pt2` hold the model's real weights: share `repro.pt2`, "
                                 "`repro.py` and `repro_test.cc` alone."
                               : "")
     << "\n\n";
  if (!r.dynamic_shapes.empty()) {
    md << "## Dynamic shapes\n\n";
    for (const auto& line : r.dynamic_shapes) md << "- " << line << "\n";
    md << "\n";
  }
  md << FiguresMarkdown(r, spec) << "## Steps\n\nStrategies, in order: ";
  for (size_t i = 0; i < r.strategies.size(); ++i) md << (i ? ", " : "") << "`" << r.strategies[i] << "`";
  md << "\n\n| strategy | what | nodes | compiles so far | time |\n| --- | --- | --- | ---: | ---: |\n";
  for (const auto& e : r.log) {
    md << "| " << e.strategy << " | " << e.what << " | " << e.nodes_before << " -> " << e.nodes_after << " | "
       << e.compiles << " | " << static_cast<int>(e.seconds + 0.5) << " s |\n";
  }
  if (r.stage.ran || !r.stage.why_not.empty()) md << "\n" << StageMarkdown(r.stage);
  if (!not_written.empty()) {
    md << "\n## Not written\n\nThe full set of artifacts could not be written, so this directory holds the "
          "essentials only (no checkpoints, no copy of the original):\n\n";
    for (const auto& w : not_written) md << "- " << w << "\n";
  }
  return md.str();
}

// DiagnosisOfRepro: diagnosis.md, the triage of the repro's failure, with the reducer's
// culprit as evidence.
std::string DiagnosisOfRepro(const ReduceResult& r) {
  TriageEvidence evidence;
  evidence.package = "repro.pt2";
  evidence.failure_class = r.failure_class;
  evidence.message = WithReproPath(r.message, r.final_archive);
  evidence.host = DetectHost();
  evidence.culprit = r.culprit;
  evidence.reduced_nodes = r.nodes_after;
  evidence.culprit_op = CulpritOperator(r.minimal, r.culprit_path.empty() ? r.culprit : r.culprit_path);
  for (const auto& p : r.error_profiles) {
    if (p.where != "the repro") continue;
    OutputFiniteness o;
    o.name = p.output;
    o.numel = p.numel;
    for (size_t i = 0; i < p.compiled_error.size(); ++i) {
      // A non-finite bucket holds at least one non-finite element, of the compiled run or of eager's.
      if (!std::isfinite(p.compiled_error[i]) && std::isfinite(p.eager_error[i])) ++o.compiled_nan;
    }
    if (o.compiled_nan) evidence.outputs.push_back(o);
  }
  return DiagnosisMarkdown(Triage(evidence), evidence) + (r.stage.ran ? "\n" + StageMarkdown(r.stage) : std::string());
}

// SummaryJson: summary.json, the same figures for machines (CI, scripts).
json SummaryJson(const ReduceResult& r, const ReduceSpec& spec, const std::vector<std::string>& not_written) {
  json ops = json::array();
  for (const auto& op : OperatorNames(r.minimal)) ops.push_back(op);
  return {{"reduced", true},
          {"failure_class", r.failure_class},
          {"model", r.model},
          {"package", ShownPackage(r, spec)},
          {"accuracy", AccuracyModeName(spec.check.accuracy.mode)},
          {"nodes_before", r.nodes_before},
          {"nodes_after", r.nodes_after},
          {"ops", ops},
          {"culprit", r.culprit},
          {"culprit_path", r.culprit_path},
          {"culprit_text", CulpritText(r)},
          {"compiles", r.compiles},
          {"cache_hits", r.cache_hits},
          {"disk_cache_hits", r.disk_cache_hits},
          {"remote_cache", r.remote_cache},
          {"remote_cache_hits", r.remote_cache_hits},
          {"remote_cache_stores", r.remote_cache_stores},
          {"remote_cache_problem", r.remote_cache_problem},
          {"jobs", r.jobs},
          {"speculative_compiles", r.speculative_compiles},
          {"seconds", r.seconds},
          {"final_recheck_failed_again", r.final_recheck_failed_again},
          {"final_rechecked", r.final_rechecked},
          {"budget_exhausted", r.budget_exhausted},
          {"sanity_checked", r.sanity_checked},
          {"hang_timeout_s", r.hang_timeout_s},
          {"weights", r.weights},
          {"strategies", r.strategies},
          {"dynamic_shapes", r.dynamic_shapes},
          {"stage", StageJson(r.stage)},
          {"not_written", not_written}};
}

// WriteCase: the original (copied unless the case beside holds it), its inputs and
// case.json, with the check options the test ran with, its op libraries copied here.
// Returns those options, the repro's to judge by.
CheckOptions WriteCase(const ReduceResult& r, const ReduceSpec& spec, const ReduceOptions& options,
                       const std::string& out_dir, bool full, const std::string& device) {
  // The listener's repro lies in the test's case directory (<case>/repro), beside the
  // case's own copy of the original: case.json points there (../original.pt2) instead of
  // a second copy of the whole model.
  const std::string beside = (fs::path(out_dir).parent_path() / "original.pt2").string();
  const bool original_beside = full && SameContents(spec.package, beside);
  if (full && !original_beside) CopyFileAtomically(spec.package, out_dir + "/original.pt2");
  if (!spec.inputs.empty()) {
    MakeDirs(out_dir + "/original_inputs");
    WriteTensorBundle(out_dir + "/original_inputs", spec.inputs);
  }
  CheckOptions check = spec.check;
  check.model = r.model;
  check.runner.op_libraries = CopyOpLibraries(spec.check.runner.op_libraries, out_dir);
  CaseFile case_file;
  case_file.package = original_beside ? beside : full ? out_dir + "/original.pt2" : fs::absolute(spec.package).string();
  case_file.failure_class = r.failure_class;
  case_file.message = r.message;
  case_file.check_str = options.check_str;
  case_file.inductor_configs_json = r.inductor_configs_json;
  case_file.inputs_dir = spec.inputs.empty() ? "" : out_dir + "/original_inputs";
  case_file.device = device;
  case_file.options = check;
  WriteTextFileAtomically(out_dir + "/case.json", JsonText(CaseFileToJson(case_file, out_dir), 1));
  return check;
}

void WriteArtifactSet(const ReduceResult& r, const ReduceSpec& spec, const ReduceOptions& options,
                      const std::string& out_dir, bool full, const std::vector<std::string>& not_written) {
  MakeDirs(out_dir + "/checkpoints");
  auto original = Pt2Archive::Open(spec.package);
  // The original's device is the repro's: candidates keep each input's device.
  const std::string device = original->DeviceType(r.model);
  // case.json, check_options.json (the repro test's) and repro.py all carry the same options.
  CheckOptions repro_check = WriteCase(r, spec, options, out_dir, full, device);
  // The repro judges as the reduction did: a hang at the reduction's shorter timeout.
  if (r.hang_timeout_s > 0) repro_check.runner.timeout_s = r.hang_timeout_s;
  const json options_json = CheckOptionsToJson(repro_check, out_dir);
  WriteTextFileAtomically(out_dir + "/check_options.json", JsonText(options_json, 1) + "\n");
  if (!r.final_archive.empty()) CopyFileAtomically(r.final_archive, out_dir + "/repro.pt2");
  for (const auto& [nodes, archive] : r.checkpoints) {
    if (full && !archive.empty()) CopyFileAtomically(archive, out_dir + "/checkpoints/" + std::to_string(nodes) + ".pt2");
  }
  const std::string env = EnvironmentHeader(r.final_archive.empty() ? spec.package : r.final_archive);
  WriteTextFileAtomically(out_dir + "/aoti_aten_fallbacks.py", kAtenFallbacksModule);
  WriteTextFileAtomically(out_dir + "/repro.py", ReproPy(r, JsonText(options_json), options.check_str, env, device));
  // graph.dot, the culprit marked (report.html draws it).
  WriteTextFileAtomically(out_dir + "/graph.dot", GraphDot(r.minimal, {}, r.culprit));
  WriteTextFileAtomically(out_dir + "/BUILD.bazel", ReproBuild(r, options_json, device));
  WriteTextFileAtomically(out_dir + "/repro_test.cc", ReproTestCc(r));
  if (r.stage.ran) {
    const std::string label = "`" + ShownPackage(r, spec) + "` (model `" + r.model + "`)";
    WriteTextFileAtomically(out_dir + "/workaround.md", WorkaroundMarkdown(r.stage, label));
  }
  WriteTextFileAtomically(out_dir + "/report.md", ReportMarkdown(r, spec, *original, env, not_written));
  WriteTextFileAtomically(out_dir + "/diagnosis.md", DiagnosisOfRepro(r));
  // report.html: the same, as a page with the graphs drawn and the error plotted.
  WriteTextFileAtomically(out_dir + "/report.html",
                          ReportHtml(r, spec, env, WithReproPath(r.message, r.final_archive), out_dir));
  WriteTextFileAtomically(out_dir + "/summary.json", JsonText(SummaryJson(r, spec, not_written), 1) + "\n");
}

// ReplaceDirectory puts `staging` where `out_dir` is, in one step when the kernel can
// (renameat2 RENAME_EXCHANGE), keeping this run's compile server log from the old one.
void ReplaceDirectory(const std::string& staging, const std::string& out_dir) {
  std::error_code ec;
  const fs::path log = fs::path(out_dir) / "compile_server.log";
  if (fs::exists(log, ec) && !fs::exists(fs::path(staging) / "compile_server.log", ec)) {
    fs::rename(log, fs::path(staging) / "compile_server.log", ec);
  }
  if (!fs::exists(out_dir, ec)) {
    if (fs::path(out_dir).has_parent_path()) fs::create_directories(fs::path(out_dir).parent_path(), ec);
    if (std::rename(staging.c_str(), out_dir.c_str()) != 0) {
      throw HarnessError("cannot move " + staging + " to " + out_dir + ": " + std::strerror(errno));
    }
    return;
  }
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, out_dir.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(staging, ec);  // now the old set
    return;
  }
  // No atomic exchange on this file system: move the old set aside first.
  const std::string old = out_dir + ".old";
  fs::remove_all(old, ec);
  if (std::rename(out_dir.c_str(), old.c_str()) != 0 || std::rename(staging.c_str(), out_dir.c_str()) != 0) {
    throw HarnessError("cannot move " + staging + " to " + out_dir + ": " + std::strerror(errno));
  }
  fs::remove_all(old, ec);
}

}  // namespace

void WriteArtifacts(const ReduceResult& r, const ReduceSpec& spec, const ReduceOptions& options,
                    const std::string& out_dir) {
  // The set is written aside and moved into place whole: a disk that fills, or a test
  // killed at its timeout, never leaves a mix of an earlier repro and a partial new one.
  const std::string staging = out_dir + ".partial";
  std::error_code ec;
  fs::remove_all(staging, ec);
  try {
    WriteArtifactSet(r, spec, options, staging, /*full=*/true, {});
  } catch (const std::exception& full_error) {
    fs::remove_all(staging, ec);
    const std::vector<std::string> not_written = {
        std::string("the full set (checkpoints/, original.pt2): ") + full_error.what()};
    LOG(WARNING) << not_written[0] << "; writing the essentials only";
    try {
      WriteArtifactSet(r, spec, options, staging, /*full=*/false, not_written);
    } catch (const std::exception& e) {
      fs::remove_all(staging, ec);
      throw HarnessError("the repro could not be written to " + out_dir + " (" + e.what() + "; before that: " +
                         full_error.what() + "); " +
                         (fs::exists(fs::path(out_dir) / "report.md", ec) ? "the earlier repro there is left as it was"
                                                                         : "nothing was written"));
    }
  }
  ReplaceDirectory(staging, out_dir);
}

void WriteNotReproduced(const std::string& out_dir, const std::string& failure_class, const std::string& message) {
  MakeDirs(out_dir);
  WriteTextFileAtomically(out_dir + "/report.md",
                          "# Not reduced: a fresh compile does not reproduce the failure\n\n"
                          "The test failed as **" + failure_class + "**, and nothing was reduced:\n\n" + message +
                          "\n\nThe test's own case (case.json, original.pt2, inputs/, diagnosis.md) is beside this "
                          "directory.\n");
  const json summary = {{"reduced", false}, {"failure_class", failure_class}, {"not_reproduced", message}};
  WriteTextFileAtomically(out_dir + "/summary.json", JsonText(summary, 1) + "\n");
}

}  // namespace aoti
