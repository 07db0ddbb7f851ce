#include "reducer/reduce_listener.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include <gflags/gflags.h>
#include <glog/logging.h>

#include "harness/deadline.h"
#include "harness/failing_case.h"
#include "harness/flags.h"
#include "harness/tensor_bundle.h"
#include "harness/temp_dir.h"
#include "harness/test_hooks.h"
#include "harness/check.h"
#include "reducer/artifacts.h"
#include "reducer/progress.h"
#include "reducer/reducer.h"

namespace {

bool EnvIsOne(const char* name) {
  const char* v = std::getenv(name);
  return v && std::string(v) == "1";
}

bool EnvIsZero(const char* name) {
  const char* v = std::getenv(name);
  return v && std::string(v) == "0";
}

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

}  // namespace

DEFINE_bool(aoti_reduce_on_failure, EnvIsOne("DUMP_AOTI_MINIFIER"),
            "Reduce every failed AOTI check to a minimal repro in the test outputs. Env: DUMP_AOTI_MINIFIER=1.");
DEFINE_int32(aoti_repro_level, EnvInt("AOTINDUCTOR_REPRO_LEVEL", 2),
             "Which failures to reduce: 1 compile failures, 2 any, 3 any (case written first), 4 accuracy only. "
             "Env: AOTINDUCTOR_REPRO_LEVEL.");
DEFINE_string(aoti_python, "", "Python with torch for the compile server (default: $AOTI_PYTHON).");
DEFINE_string(aoti_compile_server, "", "tools/compile_server.py (set by aoti_model_test).");
DEFINE_int32(aoti_reduce_jobs, EnvInt("AOTI_REDUCE_JOBS", 0),
             "Compile servers a reduction runs at once (0: what fits this machine: two cores and 2 GiB each, at most "
             "8). The result is the same whatever the number. Env: AOTI_REDUCE_JOBS.");
DEFINE_bool(aoti_reduce_random_weights, EnvIsOne("AOTI_REDUCE_RANDOM_WEIGHTS"),
            "Once reduced, compile the repro once more with random weights of the same shape, dtype, mean and std, "
            "and keep them in repro.pt2 where the failure reproduces (report.md says which it holds). "
            "Env: AOTI_REDUCE_RANDOM_WEIGHTS=1.");
DEFINE_bool(aoti_reduce_stage_ladder, !EnvIsZero("AOTI_REDUCE_STAGE_LADDER"),
            "Once reduced, find the stage of the compiler at fault (a few compiles of the repro) and a workaround "
            "verified on the original (one or two compiles of it): report.md, workaround.md. "
            "Env: AOTI_REDUCE_STAGE_LADDER=0 turns it off.");
DEFINE_double(aoti_reduce_hang_timeout_s, 20,
              "Reducing a hang: a candidate's compiled run that goes on this long counts as hanging (capped at the "
              "test's own --aoti_timeout_s; 0: that timeout).");
DEFINE_double(aoti_reduce_time_budget_s, 0,
              "Time budget of each reduction in a test (0: what is left of Bazel's TEST_TIMEOUT, less a margin; "
              "no budget outside Bazel).");

namespace aoti {
namespace {

bool Wanted(const std::string& failure_class) {
  // Not the compiler's failures, or ones no rule can judge: nothing to reduce.
  if (failure_class == "preflight" || failure_class == "harness error" || failure_class == "export error" ||
      failure_class == "nondeterministic" || failure_class == "unreliable reference" ||
      failure_class == "harness disagreement") {
    return false;
  }
  switch (FLAGS_aoti_repro_level) {
    case 1: return failure_class == "compile error";
    case 4: return failure_class == "accuracy";
    default: return true;
  }
}

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

void ReduceOnFailureListener::OnTestEnd(const ::testing::TestInfo& info) {
  std::vector<FailingCase> cases = TakeFailingCases();
  if (!FLAGS_aoti_reduce_on_failure || cases.empty()) return;
  const char* env_python = std::getenv("AOTI_PYTHON");
  const std::string python = !FLAGS_aoti_python.empty() ? FLAGS_aoti_python : (env_python ? env_python : "");
  int reduced = 0;
  for (const FailingCase& c : cases) {
    if (!Wanted(c.failure_class)) continue;
    // test.xml properties, one set per failing check: aoti_repro, aoti_repro_2, ...
    const std::string suffix = ++reduced == 1 ? "" : "_" + std::to_string(reduced);
    const std::string where = c.directory.empty() ? std::string("aoti_repro_") + info.name() : c.directory;
    const std::string out = where + "/repro";
    LOG(INFO) << "reducing the " << c.failure_class << " failure of " << c.test_name << " into " << out
              << " (AOTINDUCTOR_REPRO_LEVEL=" << FLAGS_aoti_repro_level << ")";
    try {
      if (python.empty() || FLAGS_aoti_compile_server.empty()) {
        throw HarnessError("the compile server is not configured (--aoti_python, --aoti_compile_server); "
                           "use aoti_model_test, or run aoti_reduce minify --case_dir=" + where);
      }
      CompileServerOptions server;
      server.python = python;
      server.server_script = FLAGS_aoti_compile_server;
      MakeDirs(out);
      server.log_path = out + "/compile_server.log";
      ReduceSpec spec;
      spec.package = c.package;
      spec.model = c.options.model;
      spec.inputs = c.inputs;
      spec.failure_class = c.failure_class;
      spec.failure_message = c.message;
      // The options the check ran with, as the test chose them (not rebuilt from flags).
      spec.check = c.options;
      server.op_libraries = spec.check.runner.op_libraries;
      server.env_pass_through = spec.check.runner.env_pass_through;
      ReduceOptions options;
      options.jobs = FLAGS_aoti_reduce_jobs;
      options.random_weights = FLAGS_aoti_reduce_random_weights;
      options.stage_ladder = FLAGS_aoti_reduce_stage_ladder;
      options.compile_cache = CompileCacheOptionsFor(FLAGS_aoti_compile_cache_dir, FLAGS_aoti_compile_cache_max_mb);
      server.precompiled_headers_dir = PrecompiledHeadersDir(options.compile_cache);
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - ProcessStart()).count();
      options.time_budget_s =
          ReductionBudgetSeconds(FLAGS_aoti_reduce_time_budget_s, std::getenv("TEST_TIMEOUT"), elapsed);
      // One deadline for every compile and run of the reduction (the check's runs had it too).
      options.deadline = server.deadline = Deadline::ForThisTest();
      options.hang_timeout_s = FLAGS_aoti_reduce_hang_timeout_s;
      if (options.time_budget_s < 0) {
        throw HarnessError("no time is left in this test's TEST_TIMEOUT (" + std::string(std::getenv("TEST_TIMEOUT")) +
                           " s) to reduce" + LongerSizeAdvice() + "; the case is in " + where +
                           ": run aoti_reduce minify --case_dir=" + where);
      }
      if (options.time_budget_s > 0) {
        LOG(INFO) << "time budget: " << static_cast<int>(options.time_budget_s) << " s"
                  << (FLAGS_aoti_reduce_time_budget_s > 0 ? "" : " (what TEST_TIMEOUT leaves, less a margin)");
      }
      CompileClient client(server);
      TempDir work("aoti_reduce");
      ProgressLog progress;
      const ReduceResult r = Reduce(spec, options, &client, work.path(),
                                    progress.Callback());
      WriteArtifacts(r, spec, options, out);
      if (r.budget_exhausted && FLAGS_aoti_reduce_time_budget_s <= 0) {
        const std::string advice = "the test's timeout was too short for a whole reduction" + LongerSizeAdvice();
        LOG(WARNING) << c.test_name << ": " << advice << "; the repro in " << InOutputsZip(out)
                     << " is the best one so far";
        ::testing::Test::RecordProperty("aoti_timeout_advice" + suffix, advice);
      }
      // The same figures as the test.xml properties below, for the annotation and the log.
      const std::string how =
          r.sanity_checked ? " reduced from " + std::to_string(r.nodes_before) + " to " + std::to_string(r.nodes_after) +
                                 " nodes"
                           : " not reduced: the time ran out during the sanity check, the repro is the original (" +
                                 std::to_string(r.nodes_after) + " nodes)";
      const std::string summary =
          c.test_name + ": " + r.failure_class + how + " (" + std::to_string(r.compiles) + " compiles" +
          (r.disk_cache_hits ? ", " + std::to_string(r.disk_cache_hits) + " from the disk cache" : "") + ")" +
          (r.culprit.empty() ? "" : ", culprit " + r.culprit) + (r.budget_exhausted ? ", the best within the time budget" : "") +
          "; repro: " + InOutputsZip(out) + " (python repro.py; bazel test :repro_test; open report.html)" +
          (r.stage.ran ? "; stage: " + r.stage.stage + "; workaround: " +
                             (r.stage.workaround_verified ? r.stage.workaround_what + " (verified on the original, " +
                                                                InOutputsZip(out) + "/workaround.md)"
                                                          : "none verified (" + r.stage.workaround_verdict + ")")
                       : "");
      LOG(INFO) << summary << "\n" << FormatGraph(r.minimal);
      Annotate(c.test_name, summary + "\n" + FormatGraph(r.minimal));
      ::testing::Test::RecordProperty("aoti_reduced_class" + suffix, r.failure_class);
      ::testing::Test::RecordProperty("aoti_nodes_before" + suffix, static_cast<int>(r.nodes_before));
      ::testing::Test::RecordProperty("aoti_nodes_after" + suffix, static_cast<int>(r.nodes_after));
      ::testing::Test::RecordProperty("aoti_compiles" + suffix, r.compiles);
      ::testing::Test::RecordProperty("aoti_repro" + suffix, InOutputsZip(out));
      if (r.stage.ran) {
        ::testing::Test::RecordProperty("aoti_stage" + suffix, r.stage.stage);
        ::testing::Test::RecordProperty("aoti_workaround" + suffix,
                                        r.stage.workaround_verified ? r.stage.merged_configs_json
                                                                    : "none verified: " + r.stage.workaround_verdict);
      }
    } catch (const NotReproducedError& e) {
      // Not a failure of the reduction: the shipped artifact's failure is not this
      // compiler's. Said plainly in the outputs and the property.
      ::testing::Test::RecordProperty("aoti_repro" + suffix, std::string("not reduced: ") + e.what());
      LOG(WARNING) << "not reducing " << c.test_name << ": " << e.what();
      Annotate(c.test_name, c.test_name + ": not reduced: " + e.what());
      try {
        WriteNotReproduced(out, c.failure_class, e.what());
      } catch (const std::exception& w) {
        LOG(WARNING) << "could not write " << out << "/report.md: " << w.what();
      }
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
