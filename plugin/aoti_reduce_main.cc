// aoti_reduce: run a failing case as it is, or reduce it to a minimal repro.
//
//   aoti_reduce run    --package P [--inputs DIR]
//   aoti_reduce minify --package P [--inputs DIR] [--failure_class C] [--check_str S]
//                      [--max_granularity G] [--skip_sanity] [--strict_accuracy]
//                      [--time_budget_s T] [--aoti_reduce_strategies a,b] [--out DIR]
//                      [--offload_to_disk] [--noskip_export_error]
//   aoti_reduce minify --case_dir DIR (a case directory the harness wrote on a failure: its
//                      package, inputs and the check options its test ran with; --aoti_*
//                      flags given here override single options)
//   The test's --aoti_reduce_* flags (jobs, random_weights, stage_ladder, lift_control_flow,
//   hang_timeout_s, time_budget_s) and --aoti_compile_server mean the option of the same
//   name here; --aoti_reduce_on_failure is refused.
//
// Exit status: 0 reduced (or run: passes), 1 run: fails, 2 bad input, 3 a reducer
// problem, 4 not reduced: a fresh compile does not reproduce the failure (report.md says
// why).
//   aoti_reduce --print_strategies
//
//   aoti_reduce bisect-torch --case_dir DIR [--torch_pythons PY,PY,...]
//     Which torch broke it: DIR's repro.py (DIR: a repro directory, or a case directory
//     holding repro/) run under each torch, oldest first (default: every virtualenv
//     tools/torch_matrix.sh made, ~/.cache/aoti_harness/torch-*, and the set-up's); the
//     newest torch that passes, the oldest that fails and the inductor config that differs
//     between them, into DIR's report.md, summary.json and test.xml. Exit status: 0 the
//     torches were tried (the answer says what they showed), 2 bad input.
//
// This replaces upstream's minifier_launcher.py.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <nlohmann/json.hpp>

#include "harness/case/case_file.h"
#include "plugin/check_flags.h"
#include "plugin/compile_cache_flags.h"
#include "harness/util/errors.h"
#include "harness/case/failing_case.h"
#include "plugin/flags.h"
#include "harness/util/logging.h"
#include "harness/archive/tensor_bundle.h"
#include "harness/util/temp_dir.h"
#include "harness/check/check.h"
#include "reducer/artifacts.h"
#include "reducer/standalone_repro.h"
#include "reducer/progress.h"
#include "reducer/reducer.h"
#include "reducer/strategies/strategy.h"
#include "reducer/torch_bisect.h"

DEFINE_string(package, "", "the failing program archive (.pt2)");
DEFINE_string(inputs, "", "a tensor bundle directory with the inputs (default: the archive's sample inputs)");
DEFINE_string(case_dir, "", "a case directory written by the harness (case.json, inputs/)");
DEFINE_string(failure_class, "", "the failure to preserve (default: whatever the original does)");
DEFINE_string(check_str, "", "the failure message must contain this string");
DEFINE_int32(max_granularity, 0, "delta debugging's first window size, a power of two (default: largest that fits)");
DEFINE_bool(skip_sanity, false, "do not check first that the original still fails");
DEFINE_bool(strict_accuracy, false, "accuracy failures by allclose alone instead of the fp64-RMSE rule");
DEFINE_double(time_budget_s, 0,
              "stop after this many seconds with the best result so far (0: no budget); no compile or run outlasts it");
DEFINE_double(hang_timeout_s, 20,
              "reducing a hang: a candidate's compiled run that goes on this long counts as hanging (capped at the "
              "case's own timeout; 0: that timeout)");
DEFINE_string(aoti_reduce_strategies, "", "comma-separated strategies, in order (default: all; see --print_strategies)");
DEFINE_string(out, "", "artifact directory (default: ./aoti_repro)");
DEFINE_string(python, "", "Python with torch for the compile server (default: $AOTI_PYTHON, else the one the "
              "harness was built with (@torch//:python in the runfiles), else python3)");
DEFINE_string(compile_server, "", "path of tools/compile_server.py (default: next to this binary's runfiles)");
DEFINE_double(compile_timeout_s, 900, "timeout for one compile");
DEFINE_bool(offload_to_disk, false, "keep the eager intermediates on disk instead of in memory");
DEFINE_bool(skip_export_error, true, "count a candidate torch.export cannot load as not failing (else abort)");
DEFINE_int32(jobs, std::getenv("AOTI_REDUCE_JOBS") ? std::atoi(std::getenv("AOTI_REDUCE_JOBS")) : 0,
             "compile servers at once (0: what fits this machine: two cores and 2 GiB each, at most 8); the result is "
             "the same whatever the number. Env: AOTI_REDUCE_JOBS");
DEFINE_bool(random_weights, false,
            "once reduced, compile the repro once more with random weights of the same shape, dtype, mean and std; "
            "repro.pt2 keeps them where the failure reproduces (report.md says which it holds)");
DEFINE_bool(stage_ladder, true,
            "once reduced, find the stage of the compiler at fault (a few compiles of the repro) and a workaround "
            "verified on the original (one or two compiles of it): report.md, workaround.md");
DEFINE_bool(lift_control_flow, true,
            "reduce a program with control flow with it lifted as it ran (the branch taken, a loop's first "
            "iteration), where that still fails the same way; false keeps the control flow and cuts its body");
DEFINE_bool(allow_outside_case_dir, false,
            "let --case_dir's case.json name a package, inputs or op libraries outside the case directory (a case "
            "directory is code: its op libraries are loaded, its .pt2 holds a shared object; reduce a case you did not "
            "make only in a sandbox)");
DEFINE_bool(print_strategies, false, "list the strategies in the order they run, and exit");
DEFINE_string(torch_pythons, "",
              "bisect-torch: the torches to try, comma-separated Pythons (default: each ~/.cache/aoti_harness/torch-*/bin/"
              "python that tools/torch_matrix.sh made, and the set-up's)");
DEFINE_double(torch_timeout_s, 1800, "bisect-torch: one run of repro.py under one torch (a compile and a run)");

namespace {

// The test's --aoti_reduce_* flags (plugin/flags.cc, linked here for the check options)
// and the command line's own: given here, a test flag means what it means to the test
// (the same option of the reduction), so a command copied from a test's flags does what
// it says. Both given, with different values: refused, never one silently dropped.
struct FlagAlias {
  const char* test_flag;
  const char* own_flag;
};
constexpr FlagAlias kFlagAliases[] = {
    {"aoti_reduce_jobs", "jobs"},
    {"aoti_reduce_random_weights", "random_weights"},
    {"aoti_reduce_stage_ladder", "stage_ladder"},
    {"aoti_reduce_lift_control_flow", "lift_control_flow"},
    {"aoti_reduce_hang_timeout_s", "hang_timeout_s"},
    {"aoti_reduce_time_budget_s", "time_budget_s"},
    {"aoti_compile_server", "compile_server"},
};

// HonourTestFlags: applies the aliases, and refuses the test flags that mean nothing to a
// command that always reduces.
void HonourTestFlags() {
  for (const FlagAlias& a : kFlagAliases) {
    const gflags::CommandLineFlagInfo test = gflags::GetCommandLineFlagInfoOrDie(a.test_flag);
    if (test.is_default) continue;
    const gflags::CommandLineFlagInfo own = gflags::GetCommandLineFlagInfoOrDie(a.own_flag);
    if (!own.is_default && own.current_value != test.current_value) {
      throw aoti::HarnessError(std::string("--") + a.test_flag + "=" + test.current_value + " and --" + a.own_flag + "=" +
                               own.current_value + " name the same option with different values; give one of them");
    }
    gflags::SetCommandLineOption(a.own_flag, test.current_value.c_str());
  }
  if (!gflags::GetCommandLineFlagInfoOrDie("aoti_reduce_on_failure").is_default) {
    throw aoti::HarnessError(
        "--aoti_reduce_on_failure is the test's switch to reduce a failing check; aoti_reduce minify always reduces "
        "and aoti_reduce run never does: drop the flag");
  }
}

std::string Dirname(const std::string& p) {
  const size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

// SpecFromFlags: the failing case, from --case_dir (the options the test ran with, single
// fields overridden by --aoti_* flags given here) or from --package and the flags. The case
// directory opened stays in `opened` (one unzipped out of outputs.zip is removed with it).
aoti::ReduceSpec SpecFromFlags(aoti::ReduceOptions* options, std::optional<aoti::OpenedCaseDir>* opened) {
  aoti::ReduceSpec spec;
  // Relative paths as the user meant them (bazel run starts in the runfiles).
  std::string package = aoti::FromWorkingDirectory(FLAGS_package), inputs_dir = aoti::FromWorkingDirectory(FLAGS_inputs);
  if (!FLAGS_case_dir.empty()) {
    // A case where Bazel left it: unzipped, or read out of the test's outputs.zip.
    opened->emplace(aoti::OpenCaseDir(FLAGS_case_dir));
    const std::string case_dir = (*opened)->path();
    const aoti::CaseFile c = aoti::ParseCaseFile(aoti::ReadTextFile(case_dir + "/case.json"), case_dir);
    if (const auto outside = aoti::PathsOutsideCaseDir(c, case_dir); !outside.empty() && !FLAGS_allow_outside_case_dir) {
      std::string list;
      for (const auto& o : outside) list += "\n  " + o;
      throw aoti::HarnessError(case_dir + "/case.json names paths outside the case directory:" + list +
                               "\nA case directory is code (its op libraries are loaded, its .pt2 holds a shared "
                               "object), so aoti_reduce keeps to it. Copy the files into the case directory, or, for a "
                               "case you made yourself, pass --allow_outside_case_dir.");
    }
    package = c.package;
    if (!c.inputs_dir.empty()) inputs_dir = c.inputs_dir;
    spec.failure_class = c.failure_class;
    options->check_str = c.check_str;
    spec.check = aoti::CheckOptionsFromFlags(&c.options);
  } else {
    spec.check = aoti::CheckOptionsFromFlags();
  }
  if (package.empty()) throw aoti::HarnessError("--package (or --case_dir) is required: the failing .pt2");
  spec.package = package;
  spec.model = spec.check.model;
  if (!inputs_dir.empty()) spec.inputs = aoti::ReadTensorBundle(inputs_dir);
  if (!FLAGS_failure_class.empty()) spec.failure_class = FLAGS_failure_class;
  if (!FLAGS_check_str.empty()) options->check_str = FLAGS_check_str;
  if (FLAGS_strict_accuracy) spec.check.accuracy.mode = aoti::AccuracyMode::kStrict;
  return spec;
}

void ReduceOptionsFromFlags(aoti::ReduceOptions* options) {
  if (FLAGS_max_granularity < 0 || (FLAGS_max_granularity & (FLAGS_max_granularity - 1)) != 0) {
    throw aoti::HarnessError("--max_granularity=" + std::to_string(FLAGS_max_granularity) + ": expected a power of two");
  }
  if (FLAGS_jobs < 0) throw aoti::HarnessError("--jobs=" + std::to_string(FLAGS_jobs) + ": expected 0 (fit the machine) or more");
  options->max_granularity = FLAGS_max_granularity;
  options->skip_sanity = FLAGS_skip_sanity;
  options->time_budget_s = FLAGS_time_budget_s;
  options->hang_timeout_s = FLAGS_hang_timeout_s;
  options->strategies = aoti::SplitFlagList(FLAGS_aoti_reduce_strategies);
  options->compile_cache = aoti::CompileCacheOptionsFromFlags();
  options->offload_to_disk = FLAGS_offload_to_disk;
  options->random_weights = FLAGS_random_weights;
  options->stage_ladder = FLAGS_stage_ladder;
  options->lift_control_flow = FLAGS_lift_control_flow;
  options->jobs = FLAGS_jobs;
  options->skip_export_errors = FLAGS_skip_export_error;
}

// ServerFromFlags: the compile server: its Python (said, and resolved here: execve
// searches no PATH), its script (from the runfiles), the test's op libraries.
aoti::CompileServerOptions ServerFromFlags(const aoti::ReduceSpec& spec, const aoti::ReduceOptions& options,
                                           const char* argv0, const std::string& out) {
  aoti::CompileServerOptions server;
  const char* env_python = std::getenv("AOTI_PYTHON");
  const char* env_runfiles = std::getenv("RUNFILES_DIR");
  const std::string runfiles = env_runfiles ? env_runfiles : Dirname(argv0) + "/aoti_reduce.runfiles";
  const std::string built_with = runfiles + "/torch/python";  // @torch//:python, the harness' own
  std::string python = "python3", python_from = "PATH";
  if (!FLAGS_python.empty()) {
    python = FLAGS_python, python_from = "--python";
  } else if (env_python && *env_python) {
    python = env_python, python_from = "AOTI_PYTHON";
  } else if (::access(built_with.c_str(), X_OK) == 0) {
    python = built_with, python_from = "the runfiles: @torch//:python";
  }
  server.python = aoti::FindExecutable(python);
  LOG(INFO) << "compile server Python: " << server.python << " (from " << python_from << ")";
  server.server_script = FLAGS_compile_server;
  if (server.server_script.empty()) server.server_script = runfiles + "/aoti_harness/tools/compile_server.py";
  server.timeout_s = FLAGS_compile_timeout_s;
  return aoti::ServerForCase(server, spec.check, options, out);
}

// BisectTorchMain: `aoti_reduce bisect-torch`.
int BisectTorchMain(const char* argv0) {
  if (FLAGS_case_dir.empty()) {
    throw aoti::HarnessError("bisect-torch needs --case_dir: the repro directory the reducer wrote (<case>/repro, or "
                             "minify's --out)");
  }
  // The report is written into the case directory: one unzipped out of outputs.zip is kept.
  aoti::OpenedCaseDir opened = aoti::OpenCaseDir(FLAGS_case_dir);
  std::string dir = opened.Keep();
  std::error_code ec;
  if (!std::filesystem::exists(dir + "/repro.py", ec) && std::filesystem::exists(dir + "/repro/repro.py", ec)) {
    dir += "/repro";
  }
  const char* env_runfiles = std::getenv("RUNFILES_DIR");
  const std::string runfiles = env_runfiles ? env_runfiles : Dirname(argv0) + "/aoti_reduce.runfiles";
  aoti::TorchBisectOptions options;
  options.probe_script = runfiles + "/aoti_harness/tools/torch_probe.py";
  options.timeout_s = FLAGS_torch_timeout_s;
  options.pythons = aoti::SplitFlagList(FLAGS_torch_pythons);
  for (std::string& p : options.pythons) p = aoti::FromWorkingDirectory(p);
  if (options.pythons.empty()) {
    const char* home = std::getenv("HOME");
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const std::string cache = xdg && *xdg ? std::string(xdg) : std::string(home ? home : "") + "/.cache";
    const char* venvs = std::getenv("AOTI_MATRIX_VENVS");
    const char* setup = std::getenv("AOTI_PYTHON");
    options.pythons = aoti::InstalledTorchPythons(venvs && *venvs ? venvs : cache + "/aoti_harness",
                                                  setup && *setup ? setup : cache + "/aoti_harness/venv/bin/python");
    if (options.pythons.empty()) {
      throw aoti::HarnessError("no torch installed to try: make the matrix's virtualenvs (bash tools/torch_matrix.sh), "
                               "or give --torch_pythons=PY,PY,...");
    }
  }
  const aoti::TorchBisect b =
      aoti::BisectTorch(dir, options, [](const std::string& s) { LOG(INFO) << "bisect-torch: " << s; });
  aoti::WriteTorchBisect(b, dir);
  for (const aoti::TorchRun& r : b.runs) {
    std::cout << "  " << (r.torch.version.empty() ? r.torch.python : r.torch.version) << ": "
              << aoti::TorchVerdictName(r.verdict) << "\n";
  }
  std::cout << b.answer << "\nwritten into " << dir << ": report.md, summary.json (torch_bisect), test.xml, torch_bisect/\n";
  return 0;
}

int Main(int argc, char** argv) {
  if (FLAGS_print_strategies) {
    for (const auto& s : aoti::Strategies()) std::cout << s.name << "\t" << s.description << "\n";
    return 0;
  }
  if (argc == 2 && std::string(argv[1]) == "bisect-torch") return BisectTorchMain(argv[0]);
  if (argc != 2 || (std::string(argv[1]) != "run" && std::string(argv[1]) != "minify")) {
    std::cerr << "usage: aoti_reduce run|minify --package P [options], or aoti_reduce bisect-torch --case_dir DIR; "
                 "see --help\n";
    return 64;
  }
  HonourTestFlags();
  aoti::ReduceOptions options;
  if (std::string(argv[1]) == "minify") ReduceOptionsFromFlags(&options);
  std::optional<aoti::OpenedCaseDir> opened;
  const aoti::ReduceSpec spec = SpecFromFlags(&options, &opened);
  if (std::string(argv[1]) == "run") {
    const aoti::CheckReport r =
        aoti::CheckAotiMatchesEager(spec.package, spec.inputs.empty() ? nullptr : &spec.inputs, spec.check);
    if (!r.built_by.empty()) std::cout << "the shipped package: " << r.built_by << "\n";
    std::cout << (r.pass ? "passes: compiled matches eager" : "fails (" + r.failure_class + "): " + r.message) << "\n";
    return r.pass ? 0 : 1;
  }
  const std::string out = aoti::FromWorkingDirectory(FLAGS_out.empty() ? "aoti_repro" : FLAGS_out);
  aoti::MakeDirs(out);
  const aoti::CompileServerOptions server = ServerFromFlags(spec, options, argv[0], out);
  aoti::CompileClient client(server);
  aoti::TempDir work("aoti_reduce");
  aoti::ProgressLog progress;
  aoti::ReduceResult r;
  try {
    r = aoti::Reduce(spec, options, &client, work.path(), progress.Callback());
  } catch (const aoti::NotReproducedError& e) {
    aoti::WriteNotReproduced(out, spec.failure_class, e.what());
    std::cout << "not reduced: " << e.what() << "\nreport: " << out << "/report.md\n";
    return 4;
  }
  aoti::WriteArtifacts(r, spec, options, out);
  // The torch-only repro, proven by a run with only torch (--noaoti_reduce_standalone_verify:
  // written only).
  aoti::StandaloneOptions standalone;
  standalone.python = server.python;
  standalone.script = FLAGS_aoti_standalone_script;
  if (standalone.script.empty()) {
    const char* env_runfiles = std::getenv("RUNFILES_DIR");
    standalone.script = (env_runfiles ? std::string(env_runfiles) : Dirname(argv[0]) + "/aoti_reduce.runfiles") +
                        "/aoti_harness/reducer/repro/standalone.py";
  }
  standalone.verify = FLAGS_aoti_reduce_standalone_verify;
  standalone.env_pass_through = spec.check.runner.env_pass_through;
  standalone.deadline = options.deadline;
  // torch's cache for its run, kept beside the compile cache's entries (none without one).
  if (!options.compile_cache.dir.empty()) standalone.inductor_cache_dir = options.compile_cache.dir + "/standalone_inductor";
  standalone.max_seconds = 1800;
  std::cout << "writing repro_standalone.py" << (standalone.verify ? " and running it alone" : "") << "\n";
  const aoti::StandaloneRecord alone = aoti::WriteStandaloneRepro(out, standalone);
  std::cout << "reduced " << r.failure_class << " from " << r.nodes_before << " to " << r.nodes_after << " nodes with "
            << r.compiles << " compiles on " << r.jobs << " compile server" << (r.jobs == 1 ? "" : "s") << " ("
            << r.speculative_compiles << " compiled ahead and not needed, " << r.cache_hits << " cache hits, "
            << r.disk_cache_hits << " compiles served by the disk cache"
            << (r.remote_cache.empty() ? "" : ", " + std::to_string(r.remote_cache_hits) + " of them by the remote cache")
            << ") in " << r.seconds << " s\n"
            << aoti::FormatGraph(r.minimal) << "repro_standalone.py: " << aoti::StandaloneText(alone) << "\n"
            << "artifacts: " << out << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage("aoti_reduce run|minify --package P [options] | bisect-torch --case_dir DIR");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  aoti::InitLogging(argv[0], FLAGS_v);
  // Run by hand or by `bazel run` (which sets no RUNFILES_DIR in every Bazel): the runfiles
  // beside the binary, where the runner and the compile server are found.
  const std::string runfiles = std::string(argv[0]) + ".runfiles";
  if (!std::getenv("RUNFILES_DIR") && !std::getenv("TEST_SRCDIR") && ::access(runfiles.c_str(), R_OK) == 0) {
    ::setenv("RUNFILES_DIR", runfiles.c_str(), 1);
  }
  try {
    return Main(argc, argv);
  } catch (const aoti::ReducerError& e) {  // before HarnessError, which it extends
    LOG(ERROR) << e.what();
    return 3;
  } catch (const aoti::HarnessError& e) {
    LOG(ERROR) << e.what();
    return 2;
  } catch (const std::exception& e) {
    LOG(ERROR) << "aoti_reduce failed (a problem in the reducer, not in your model): " << e.what()
               << "\nPlease report it with the case directory and this message.";
    return 3;
  }
}
