#include "plugin/reduce_listener.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include <gflags/gflags.h>
#include <glog/logging.h>

#include "harness/util/deadline.h"
#include "harness/util/errors.h"
#include "harness/case/failing_case.h"
#include "plugin/compile_cache_flags.h"
#include "plugin/flags.h"
#include "harness/archive/tensor_bundle.h"
#include "harness/util/temp_dir.h"
#include "plugin/test_hooks.h"
#include "harness/check/check.h"
#include "reducer/artifacts.h"
#include "reducer/standalone_repro.h"
#include "reducer/progress.h"
#include "reducer/reducer.h"

namespace aoti {
namespace {

// LongerSizeAdvice: ": size = \"medium\" (300 s) would give it more time" for this test's
// TEST_TIMEOUT, or "" outside Bazel.
std::string LongerSizeAdvice() {
  const double timeout = Deadline::ParseTestTimeout(std::getenv("TEST_TIMEOUT"));
  if (!(timeout > 0)) return "";
  const auto [size, seconds] = NextTestSize(timeout);
  const std::string more = size.empty() ? " (or --test_timeout=" + std::to_string(static_cast<int>(timeout) * 2) + ")"
                                        : ": size = \"" + size + "\" (" + std::to_string(seconds) + " s)";
  return " (TEST_TIMEOUT " + std::to_string(static_cast<int>(timeout)) + " s)" + more +
         " would give it more time, or reduce the case afterwards with aoti_reduce";
}

void Annotate(const std::string& test, const std::string& text) {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_ANNOTATIONS_DIR");
  if (!dir || !*dir) return;
  std::string name = test;
  for (auto& c : name) if (c == '/' || c == '.') c = '_';
  try {
    WriteTextFile(std::string(dir) + "/aoti_" + name + ".part", text);
  } catch (const std::exception&) {
  }
}

}  // namespace

double ReductionBudgetSeconds(double flag_s, const char* test_timeout, double elapsed_s) {
  if (flag_s > 0) return flag_s;
  const double timeout = Deadline::ParseTestTimeout(test_timeout);
  if (!(timeout > 0)) return 0;
  // What is left before the test's deadline (Deadline::ForThisTest), from its reserve.
  const double left = timeout - elapsed_s - Deadline::ArtifactReserveSeconds(timeout);
  return left > 0 ? left : -1;
}

namespace {

// ReductionSetUp: the compile server and the reduction's options for one case: the
// options the check ran with (not rebuilt from flags), the reducer's own flags, and the
// time TEST_TIMEOUT leaves.
std::pair<CompileServerOptions, ReduceOptions> ReductionSetUp(const FailingCase& c, const std::string& where,
                                                              const std::string& out) {
  CompileServerOptions server;
  server.python = FLAGS_aoti_python;  // its default is $AOTI_PYTHON
  server.server_script = FLAGS_aoti_compile_server;
  if (server.python.empty() || server.server_script.empty()) {
    throw HarnessError("the compile server is not configured (--aoti_python, --aoti_compile_server); "
                       "use aoti_model_test, or reduce the case with: " + ReduceCaseCommand(where));
  }
  ReduceOptions options;
  options.jobs = FLAGS_aoti_reduce_jobs;
  options.random_weights = FLAGS_aoti_reduce_random_weights;
  options.stage_ladder = FLAGS_aoti_reduce_stage_ladder;
  options.lift_control_flow = FLAGS_aoti_reduce_lift_control_flow;
  options.compile_cache = CompileCacheOptionsFromFlags();
  server = ServerForCase(server, c.options, options, out);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - ProcessStart()).count();
  options.time_budget_s = ReductionBudgetSeconds(FLAGS_aoti_reduce_time_budget_s, std::getenv("TEST_TIMEOUT"), elapsed);
  // One deadline for every compile and run of the reduction (the check's runs had it too).
  options.deadline = server.deadline = Deadline::ForThisTest();
  options.hang_timeout_s = FLAGS_aoti_reduce_hang_timeout_s;
  if (options.time_budget_s < 0) {
    throw HarnessError("no time is left in this test's TEST_TIMEOUT (" + std::string(std::getenv("TEST_TIMEOUT")) +
                       " s) to reduce" + LongerSizeAdvice() + "; the case is in " + ForUser(where) +
                       "; reduce it with: " + ReduceCaseCommand(where));
  }
  if (options.time_budget_s > 0) {
    LOG(INFO) << "time budget: " << static_cast<int>(options.time_budget_s) << " s"
              << (FLAGS_aoti_reduce_time_budget_s > 0 ? "" : " (what TEST_TIMEOUT leaves, less a margin)");
  }
  return {server, options};
}

// Summary: what the reduction made, for the annotation and the log (the same figures as
// the test.xml properties): what failed and its culprit, where to open the repro, then the
// figures.
std::string Summary(const FailingCase& c, const ReduceResult& r, const std::string& out) {
  const std::string how =
      r.sanity_checked ? " reduced from " + std::to_string(r.nodes_before) + " to " + std::to_string(r.nodes_after) + " nodes"
                       : " not reduced: the time ran out during the sanity check, the repro is the original (" +
                             std::to_string(r.nodes_after) + " nodes)";
  const std::string stage =
      !r.stage.ran ? ""
                   : "; stage: " + r.stage.stage + "; workaround: " +
                         (r.stage.workaround_verified
                              ? r.stage.workaround_what + " (verified on the original, " + ForUser(out) + "/workaround.md)"
                              : "none verified (" + r.stage.workaround_verdict + ")");
  // First what failed and its culprit, then where to open it; the figures after.
  const std::string culprit = CulpritText(r);
  return c.test_name + ": " + r.failure_class + (culprit.empty() ? "" : ", culprit " + culprit) +
         "\n  open: " + ForUser(out) + "/report.html (python repro.py; bazel test :repro_test)\n " + how + " (" +
         std::to_string(r.compiles) + " compiles" +
         (r.disk_cache_hits ? ", " + std::to_string(r.disk_cache_hits) + " from the disk cache" : "") +
         (r.remote_cache_hits ? ", " + std::to_string(r.remote_cache_hits) + " of them from the remote cache" : "") +
         ")" + (r.budget_exhausted ? ", the best within the time budget" : "") + stage;
}

void RecordReduction(const ReduceResult& r, const std::string& out, const std::string& suffix) {
  ::testing::Test::RecordProperty("aoti_reduced_class" + suffix, r.failure_class);
  ::testing::Test::RecordProperty("aoti_nodes_before" + suffix, static_cast<int>(r.nodes_before));
  ::testing::Test::RecordProperty("aoti_nodes_after" + suffix, static_cast<int>(r.nodes_after));
  ::testing::Test::RecordProperty("aoti_compiles" + suffix, r.compiles);
  ::testing::Test::RecordProperty("aoti_repro" + suffix, InTestOutputs(out));
  if (const std::string culprit = CulpritText(r); !culprit.empty()) {
    ::testing::Test::RecordProperty("aoti_culprit" + suffix, culprit);
  }
  if (r.stage.ran) {
    ::testing::Test::RecordProperty("aoti_stage" + suffix, r.stage.stage);
    ::testing::Test::RecordProperty("aoti_workaround" + suffix, r.stage.workaround_verified
                                                                    ? r.stage.merged_configs_json
                                                                    : "none verified: " + r.stage.workaround_verdict);
  }
}

// ReduceCase: one failing check reduced into <case>/repro, said in the log, the
// annotation and test.xml (properties suffixed _2, _3, ... for a test's later checks).
void ReduceCase(const FailingCase& c, const std::string& where, const std::string& suffix) {
  const std::string out = where + "/repro";
  LOG(INFO) << "reducing the " << c.failure_class << " failure of " << c.test_name << " into " << ForUser(out)
            << " (AOTINDUCTOR_REPRO_LEVEL=" << FLAGS_aoti_repro_level << ")";
  MakeDirs(out);
  const auto [server, options] = ReductionSetUp(c, where, out);
  ReduceSpec spec;
  spec.package = c.package;
  spec.model = c.options.model;
  spec.inputs = c.inputs;
  spec.failure_class = c.failure_class;
  spec.failure_message = c.message;
  spec.check = c.options;
  CompileClient client(server);
  TempDir work("aoti_reduce");
  ProgressLog progress;
  const ReduceResult r = Reduce(spec, options, &client, work.path(), progress.Callback());
  WriteArtifacts(r, spec, options, out);
  if (r.budget_exhausted && FLAGS_aoti_reduce_time_budget_s <= 0) {
    const std::string advice = "the test's timeout was too short for a whole reduction" + LongerSizeAdvice();
    LOG(WARNING) << c.test_name << ": " << advice << "; the repro in " << ForUser(out) << " is the best one so far";
    ::testing::Test::RecordProperty("aoti_timeout_advice" + suffix, advice);
  }
  // The torch-only repro for PyTorch's tracker, proven by a run with only torch.
  StandaloneOptions standalone;
  standalone.python = server.python;
  standalone.script = FLAGS_aoti_standalone_script;
  standalone.verify = FLAGS_aoti_reduce_standalone_verify;
  standalone.env_pass_through = c.options.runner.env_pass_through;
  standalone.deadline = options.deadline;
  // torch's cache for its run, kept beside the compile cache's entries (none without one).
  if (!options.compile_cache.dir.empty()) standalone.inductor_cache_dir = options.compile_cache.dir + "/standalone_inductor";
  LOG(INFO) << "writing repro_standalone.py and upstream_issue.md"
            << (standalone.verify ? ", then running it alone with only torch" : "");
  const StandaloneRecord alone = WriteStandaloneRepro(out, standalone);
  const std::string summary = Summary(c, r, out) + "\n  repro_standalone.py: " + StandaloneText(alone);
  LOG(INFO) << summary << "\n" << FormatGraph(r.minimal);
  Annotate(c.test_name, summary + "\n" + FormatGraph(r.minimal));
  RecordReduction(r, out, suffix);
  ::testing::Test::RecordProperty("aoti_standalone" + suffix, StandaloneText(alone));
  ::testing::Test::RecordProperty("aoti_standalone_reproduces" + suffix, alone.reproduces ? "true" : "false");
}

}  // namespace

void ReduceOnFailureListener::OnTestEnd(const ::testing::TestInfo& info) {
  std::vector<FailingCase> cases = TakeFailingCases();
  if (!FLAGS_aoti_reduce_on_failure || cases.empty()) return;
  int reduced = 0;
  for (const FailingCase& c : cases) {
    if (!ReducesOnFailure(c.failure_class)) continue;
    // test.xml properties, one set per failing check: aoti_repro, aoti_repro_2, ...
    const std::string suffix = ++reduced == 1 ? "" : "_" + std::to_string(reduced);
    const std::string where = c.directory.empty() ? std::string("aoti_repro_") + info.name() : c.directory;
    try {
      ReduceCase(c, where, suffix);
    } catch (const NotReproducedError& e) {
      // Not a failure of the reduction: the shipped artifact's failure is not this
      // compiler's. Said plainly in the outputs and the property.
      ::testing::Test::RecordProperty("aoti_repro" + suffix, std::string("not reduced: ") + e.what());
      LOG(WARNING) << "not reducing " << c.test_name << ": " << e.what();
      Annotate(c.test_name, c.test_name + ": not reduced: " + e.what());
      try {
        WriteNotReproduced(where + "/repro", c.failure_class, e.what());
      } catch (const std::exception& w) {
        LOG(WARNING) << "could not write " << ForUser(where + "/repro") << "/report.md: " << w.what();
      }
    } catch (const UnsupportedConstruct& e) {
      // What the reducer cannot cut (a package held without its program, an operator written
      // only in Python): said as such, not as a reduction that broke.
      ::testing::Test::RecordProperty("aoti_repro" + suffix, std::string("not reduced: ") + e.what());
      LOG(WARNING) << "not reducing " << c.test_name << ": " << e.what();
      Annotate(c.test_name, c.test_name + ": not reduced: " + e.what());
    } catch (const std::exception& e) {
      ::testing::Test::RecordProperty("aoti_repro" + suffix, std::string("the reduction failed: ") + e.what());
      LOG(ERROR) << "could not reduce " << c.test_name << ": " << e.what();
      Annotate(c.test_name, c.test_name + ": the reduction failed: " + e.what());
    }
  }
}

namespace {

const bool kRegistered = RegisterListenerFactory([]() -> ::testing::TestEventListener* {
  return new ReduceOnFailureListener();
});

}  // namespace
}  // namespace aoti
