// The reducer on planted bugs and on upstream's own minifier cases. Each scenario must
// end at a repro of at most 3 nodes containing the injected operator, and the number of
// compiles is pinned, so a regression in search cost fails here. Figures are printed as
// a table row and recorded as test.xml properties; artifacts land in the test outputs.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include <ATen/ops/equal.h>
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plugin/check_flags.h"
#include "harness/program/program_state.h"
#include "harness/archive/pt2_archive.h"
#include "harness/archive/tensor_bundle.h"
#include "harness/util/temp_dir.h"
#include "reducer/artifacts.h"
#include "reducer/graph_edit.h"
#include "reducer/reducer.h"

DEFINE_string(python, "", "Python with torch, for the compile server");
DEFINE_string(compile_server, "", "tools/compile_server.py");
DEFINE_string(packages_dir, "testdata/reduce", "where the scenario packages are");
DEFINE_string(op_library, "", "custom ops for the runner (crash scenario)");

namespace aoti {
namespace {

using ::testing::Contains;

// The headers inductor precompiles and the host's vector-ISA answer, shared by every
// scenario of this shard as a user's compile cache shares them between reductions
// (reducer.cc's ServerForCase). Without it each scenario's server keeps them in its own
// temporary directory and builds them again: about 15 s of every scenario's first compile.
std::string SharedHeadersDir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TEST_TMPDIR");
    static TempDir own("aoti_reduce_test_headers");  // run outside bazel test
    return (tmp != nullptr && *tmp != '\0' ? std::string(tmp) : own.path()) + "/precompiled_headers";
  }();
  return dir;
}

// ServerIn: the compile server of a test, its log in the test's work directory.
CompileServerOptions ServerIn(const std::string& log_dir) {
  CompileServerOptions server;
  server.python = FLAGS_python;
  server.server_script = FLAGS_compile_server;
  server.log_path = log_dir + "/compile_server.log";
  server.precompiled_headers_dir = SharedHeadersDir();
  return server;
}
CompileServerOptions ServerIn(const TempDir& work) { return ServerIn(work.path()); }

// The compile server the shard's planted and kept scenarios share, as one reduction's
// candidates share theirs: torch imported and inductor's first compile set up once per
// shard, not once per scenario. Those scenarios reduce with this one server (--jobs=1, the
// default on 2 cores, here on any machine); the pool's own test below starts two of its own.
// Started before a scenario counts the files in $TEST_TMPDIR, and its directories (its
// home, and the TMPDIR CompileClient makes for it) are left out of that count: they outlive
// the scenarios on purpose.
constexpr char kSharedServerHome[] = "aoti_reduce_test_shared_server";
constexpr char kServerTmpPrefix[] = "aoti_compile_server";  // CompileClient's TempDir for the server
CompileServerOptions SharedServerOptions() {
  static TempDir home(kSharedServerHome);  // made first, so removed after the server stops
  CompileServerOptions server = ServerIn(home);
  if (!FLAGS_op_library.empty()) server.op_libraries = {FLAGS_op_library};
  return server;
}
CompileClient& SharedClient() {
  static CompileClient client(SharedServerOptions());  // stopped when the test binary exits
  client.Warm();
  return client;
}

// The entries of $TEST_TMPDIR a scenario must leave as it found them: all but the shared
// server's.
std::set<std::string> ScenarioEntries(const std::set<std::string>& names) {
  std::set<std::string> kept;
  for (const auto& n : names) {
    if (n.rfind(kServerTmpPrefix, 0) != 0 && n.rfind(kSharedServerHome, 0) != 0) kept.insert(n);
  }
  return kept;
}

struct Scenario {
  const char* name;      // also the package name: <packages_dir>/<name>.pt2
  const char* failure_class;
  const char* culprit;   // the injected operator the repro must contain
  bool strict;
  int pinned_compiles;
  bool offload = false;  // keep the eager values on disk
  const char* strategies = "";  // --aoti_reduce_strategies; "" for all
  bool dynamic = false;  // exported with a dynamic batch: the repro keeps it dynamic
  bool ladder = false;   // also the stage ladder and the workaround (ExpectLadderVerdicts)
};

std::ostream& operator<<(std::ostream& os, const Scenario& s) { return os << s.name; }

// The stage ladder and the workaround, on the planted relu bugs of the block (27 nodes):
// the repro passes with relu as an ATen kernel and fails with the code not vectorised
// (inductor's relu hooks break the scalar and the vector code alike), relu has no
// decomposition to blame, and the original passes with the fallback, verified by one
// compile. The ladder's compiles are counted apart from the reduction's (pinned_compiles).
void ExpectLadderVerdicts(const ReduceResult& r, const std::string& name) {
  const StageReport& s = r.stage;
  ASSERT_TRUE(s.ran) << s.why_not;
  EXPECT_EQ(s.culprit_op, "aten.relu.default");
  ASSERT_GE(s.rungs.size(), 2u);
  EXPECT_EQ(s.rungs[0].name, "aten_fallback");
  EXPECT_TRUE(s.rungs[0].passes) << s.rungs[0].verdict;
  EXPECT_EQ(s.rungs[1].name, "vectorisation_off");
  EXPECT_TRUE(s.rungs[1].fails) << s.rungs[1].verdict;
  EXPECT_EQ(s.stage, "lowering or codegen (the scalar code too)") << s.stage_reason;
  EXPECT_EQ(s.ladder_compiles, 2) << "the decomposition rung of an op without one costs no compile";
  EXPECT_TRUE(s.workaround_verified) << s.workaround_verdict;
  EXPECT_EQ(s.workaround_compiles, 1);
  EXPECT_EQ(nlohmann::json::parse(s.workaround_configs_json),
            nlohmann::json::parse(R"({"aoti_harness.aten_fallbacks": "[\"aten.relu.default\"]"})"));
  const std::string md = WorkaroundMarkdown(s, name);
  EXPECT_THAT(md, ::testing::HasSubstr(R"("aoti_harness.aten_fallbacks": "[\"aten.relu.default\"]")"));
  EXPECT_THAT(md, ::testing::HasSubstr("from aoti_aten_fallbacks import AtenFallbacks, split_configs"));
  EXPECT_THAT(md, ::testing::HasSubstr("with AtenFallbacks(fallbacks, undecomposed):"));
  EXPECT_THAT(md, ::testing::HasSubstr("force_disable_caches"));
  std::cout << "[aoti] | " << name << " | " << r.failure_class << " | " << s.culprit_op << " | " << s.stage << " | "
            << s.workaround_what << " | ladder " << s.ladder_compiles << " + workaround " << s.workaround_compiles
            << " compiles | original passes: " << (s.workaround_verified ? "yes" : "no") << " |\n";
}

class ReduceScenario : public ::testing::TestWithParam<Scenario> {};

// The entries of a directory, by name.
std::set<std::string> Entries(const std::string& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) names.insert(e.path().filename().string());
  return names;
}

void ReduceAndCheck(const Scenario& s);

// Every scenario's reduction (its compile servers, its compiled runs, the crashing ones among
// them, its artifacts) leaves nothing in $TEST_TMPDIR once its work directory is gone.
TEST_P(ReduceScenario, ReducesToTheBuggyNode) {
  ASSERT_FALSE(FLAGS_python.empty()) << "--python is required";
  const char* test_tmp = std::getenv("TEST_TMPDIR");
  const std::string tmp = test_tmp && *test_tmp ? test_tmp : "";
  std::filesystem::create_directories(SharedHeadersDir());  // shared by the shard's scenarios, on purpose
  SharedClient();                                           // likewise
  const auto before = tmp.empty() ? std::set<std::string>{} : ScenarioEntries(Entries(tmp));
  ReduceAndCheck(GetParam());
  if (!tmp.empty()) EXPECT_EQ(ScenarioEntries(Entries(tmp)), before) << "the reduction left files in " << tmp;
}

void ReduceAndCheck(const Scenario& s) {
  TempDir work("aoti_reduce_test");
  CompileClient& client = SharedClient();
  ReduceSpec spec;
  spec.package = FLAGS_packages_dir + "/" + s.name + ".pt2";
  spec.check = CheckOptionsFromFlags();
  if (s.strict) spec.check.accuracy.mode = AccuracyMode::kStrict;
  if (!FLAGS_op_library.empty()) spec.check.runner.op_libraries = {FLAGS_op_library};
  spec.check.runner.env = {{"AOTI_TEST_NULL_DEREF", "1"}};  // arms the crashing op in the runner only
  ReduceOptions options;
  options.jobs = 1;  // the shard's one server
  options.offload_to_disk = s.offload;
  options.stage_ladder = s.ladder;
  std::stringstream names(s.strategies);
  for (std::string n; std::getline(names, n, ',');) options.strategies.push_back(n);
  const ReduceResult r = Reduce(spec, options, &client, work.path(), [](const std::string& line) {
    std::cerr << "[reduce] " << line << "\n";
  });
  EXPECT_EQ(r.failure_class, s.failure_class);
  EXPECT_LE(r.nodes_after, 3u) << FormatGraph(r.minimal);
  EXPECT_THAT(OperatorNames(r.minimal), Contains(s.culprit)) << FormatGraph(r.minimal);
  EXPECT_TRUE(r.final_recheck_failed_again);
  EXPECT_EQ(r.compiles, s.pinned_compiles) << "the search cost changed; update the pin if it improved"
                                            << (s.ladder ? " (the stage ladder's compiles are counted apart)" : "");
  if (s.ladder) ExpectLadderVerdicts(r, s.name);
  if (s.dynamic) {
    EXPECT_THAT(r.dynamic_shapes, Contains(::testing::StartsWith("kept dynamic: input"))) << FormatGraph(r.minimal);
  } else {
    EXPECT_THAT(r.dynamic_shapes, ::testing::IsEmpty());
  }
  std::ostringstream row;
  row << "| " << s.name << " | " << r.failure_class << " | " << r.nodes_before << " | " << r.nodes_after << " | "
      << r.compiles << " | " << r.cache_hits << " | " << static_cast<int>(r.seconds + 0.5) << " s |";
  std::cout << "[aoti] " << row.str() << "\n" << FormatGraph(r.minimal);
  ::testing::Test::RecordProperty("aoti_reduction", row.str());
  if (const char* out = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    WriteArtifacts(r, spec, options, std::string(out) + "/" + s.name);
  }
}

// block_runtime_error: the planted runtime_error throws inside an OpenMP parallel loop in
// the full block, which terminates the process (SIGABRT); relu alone, as in relu_cos,
// throws outside one and is a runtime error. The reducer keeps whichever class the
// original showed.
INSTANTIATE_TEST_SUITE_P(
    Planted, ReduceScenario,
    ::testing::Values(
        Scenario{"relu_cos_runtime_error", "runtime error", "aten.relu.default", false, 2},
        Scenario{"relu_cos_accuracy", "accuracy", "aten.relu.default", false, 2},
        Scenario{"log1p_relu_where", "accuracy", "aten.relu.default", false, 2},
        Scenario{"log1p_relu_where_strict", "accuracy", "aten.log1p.default", true, 2},
        Scenario{"block_compile_error", "compile error", "aten.relu.default", false, 2, false, "", false, /*ladder=*/true},
        Scenario{"block_runtime_error", "signal SIGABRT", "aten.relu.default", false, 2},
        Scenario{"block_compile_error_unnamed", "compile error", "aten.relu.default", false, 2},
        Scenario{"block_runtime_error_unnamed", "signal SIGABRT", "aten.relu.default", false, 2},
        Scenario{"block_relu_accuracy", "accuracy", "aten.relu.default", false, 2, false, "", false, /*ladder=*/true},
        Scenario{"block_log1p_accuracy", "accuracy", "aten.log1p.default", false, 2},
        Scenario{"crash_block", "signal SIGSEGV", "aoti_test.null_deref.default", false, 2},
        Scenario{"sin_cos_relu_accuracy", "accuracy", "aten.relu.default", false, 2, /*offload=*/true},
        Scenario{"log1p_relu_where_dd", "accuracy", "aten.relu.default", false, 3, false,
                 "delta_debugging,remove_outputs"},
        Scenario{"dynamic_block_compile_error", "compile error", "aten.relu.default", false, 2, false, "", true},
        // Programs that are not one straight line: the relu inside control flow (lifted out of
        // it), or after a data-dependent size (specialised to the size observed).
        Scenario{"cond_block_relu_accuracy", "accuracy", "aten.relu.default", false, 2},
        Scenario{"cond_block_compile_error", "compile error", "aten.relu.default", false, 2},
        Scenario{"while_block_runtime_error", "signal SIGABRT", "aten.relu.default", false, 2},
        Scenario{"scan_block_compile_error", "compile error", "aten.relu.default", false, 2},
        Scenario{"autocast_block_relu_accuracy", "accuracy", "aten.relu.default", false, 2},
        Scenario{"mask_block_compile_error", "compile error", "aten.relu.default", false, 2}),
    [](const auto& info) { return std::string(info.param.name); });

// The control flow kept (lift_control_flow off, as for a failure that needs the control flow
// itself): the op stays in the repro around the relu, found from the failing kernel (whose
// provenance record names the op, and whose name carries the relu), a cond's branch not
// taken emptied, each cut edge passed in with the recorded run's value; in 2 compiles, as a
// straight line's.
struct KeptScenario {
  const char* package;
  const char* failure_class;
  const char* op;            // the higher-order op left
  const char* culprit_path;  // the relu's address inside it
  size_t max_nodes;          // counting the nodes inside the op
};

class ControlFlowKept : public ::testing::TestWithParam<KeptScenario> {};

TEST_P(ControlFlowKept, TheControlFlowStaysAroundTheCulprit) {
  const KeptScenario& sc = GetParam();
  TempDir work("aoti_reduce_kept_test");
  CompileClient& client = SharedClient();
  ReduceSpec spec;
  spec.package = FLAGS_packages_dir + "/" + sc.package + ".pt2";
  spec.check = CheckOptionsFromFlags();
  ReduceOptions options;
  options.jobs = 1;  // the shard's one server
  options.lift_control_flow = false;
  const ReduceResult r = Reduce(spec, options, &client, work.path(), [](const std::string& line) {
    std::cerr << "[reduce] " << line << "\n";
  });
  EXPECT_EQ(r.failure_class, sc.failure_class);
  ASSERT_EQ(r.minimal.nodes.size(), 1u) << FormatGraph(r.minimal);
  EXPECT_EQ(HigherOrderName(r.minimal.nodes[0]), sc.op) << FormatGraph(r.minimal);
  EXPECT_THAT(OperatorNames(r.minimal), Contains("aten.relu.default")) << FormatGraph(r.minimal);
  EXPECT_LE(r.nodes_after, sc.max_nodes) << FormatGraph(r.minimal);
  EXPECT_EQ(r.culprit_path, sc.culprit_path);
  EXPECT_LE(r.compiles, 3) << "a culprit inside control flow kept: at most 3 compiles";
  EXPECT_TRUE(r.final_recheck_failed_again);
  std::ostringstream row;
  row << "| " << sc.package << ", control flow kept | " << r.failure_class << " | " << r.nodes_before << " | "
      << r.nodes_after << " | " << r.compiles << " | " << r.cache_hits << " | " << static_cast<int>(r.seconds + 0.5)
      << " s |";
  std::cout << "[aoti] " << row.str() << "\n" << FormatGraph(r.minimal);
  RecordProperty("aoti_reduction", row.str());
}

INSTANTIATE_TEST_SUITE_P(
    Kept, ControlFlowKept,
    ::testing::Values(KeptScenario{"cond_block_compile_error", "compile error", "cond", "cond/true_graph_0/relu", 3},
                      // The loop's body returns what it carries: the relu stays with the nodes its
                      // value flows through to it, and the counter its condition reads.
                      KeptScenario{"while_block_runtime_error", "signal SIGABRT", "while_loop",
                                   "while_loop/while_loop_body_graph_0/relu", 7}),
    [](const auto& info) { return std::string(info.param.package); });

// A failure that comes and goes: crash_block's custom op returns x + 1 on every other call
// of the compiled run (AOTI_TEST_FLAKY=1 in the runner only). The package as built is found
// flaky (its rate over reruns), every candidate is judged by a vote of runs, and the
// reduction still ends at the op.
TEST(Flaky, AReductionOfAFlakyFailureVotesAndKeepsTheOp) {
  TempDir work("aoti_reduce_flaky_test");
  CompileServerOptions server = ServerIn(work);
  server.op_libraries = {FLAGS_op_library};
  CompileClient client(server);
  ReduceSpec spec;
  spec.package = FLAGS_packages_dir + "/crash_block.pt2";
  spec.check = CheckOptionsFromFlags();
  spec.check.runner.op_libraries = {FLAGS_op_library};
  spec.check.runner.env = {{"AOTI_TEST_FLAKY", "1"}};
  std::vector<std::string> lines;
  const ReduceResult r = Reduce(spec, ReduceOptions{}, &client, work.path(), [&](const std::string& line) {
    std::cerr << "[reduce] " << line << "\n";
    lines.push_back(line);
  });
  EXPECT_EQ(r.failure_class, "accuracy");
  EXPECT_THAT(lines, Contains(::testing::HasSubstr("the failure is flaky: each candidate is judged by a vote of 5 runs")));
  EXPECT_LE(r.nodes_after, 3u) << FormatGraph(r.minimal);
  EXPECT_THAT(OperatorNames(r.minimal), Contains("aoti_test.null_deref.default")) << FormatGraph(r.minimal);
  EXPECT_LE(r.compiles, 3);
  std::cout << "[aoti] | crash_block flaky | accuracy | " << r.nodes_before << " | " << r.nodes_after << " | "
            << r.compiles << " | " << r.runs << " runs | " << static_cast<int>(r.seconds + 0.5) << " s |\n"
            << FormatGraph(r.minimal);
}

// Random weights: the planted relu reads a weight, so the repro keeps it; with
// --random_weights repro.pt2 holds random values of its shape and dtype in its place (the
// failure reproduces with them), and report.md says so.
TEST(RandomWeights, TheReproHoldsRandomWeightsWhereTheFailureReproduces) {
  TempDir work("aoti_reduce_random_weights_test");
  CompileServerOptions server = ServerIn(work);
  CompileClient client(server);
  ReduceSpec spec;
  spec.package = FLAGS_packages_dir + "/weight_relu_accuracy.pt2";
  spec.check = CheckOptionsFromFlags();
  ReduceOptions options;
  options.random_weights = true;
  const ReduceResult r = Reduce(spec, options, &client, work.path(), [](const std::string& line) {
    std::cerr << "[reduce] " << line << "\n";
  });
  EXPECT_EQ(r.failure_class, "accuracy");
  EXPECT_THAT(OperatorNames(r.minimal), Contains("aten.relu.default")) << FormatGraph(r.minimal);
  ASSERT_EQ(r.weights, "random") << r.weights_note;
  const ProgramState model = LoadProgramState(*Pt2Archive::Open(spec.package), "model");
  const ProgramState repro = LoadProgramState(*Pt2Archive::Open(r.final_archive), "model");
  ASSERT_EQ(repro.weights.count("w"), 1u) << "the repro does not keep the relu's weight";
  EXPECT_EQ(repro.weights.size(), 1u) << "the repro carries weights it does not use";
  EXPECT_EQ(repro.weights.at("w").sizes(), model.weights.at("w").sizes());
  EXPECT_FALSE(at::equal(repro.weights.at("w"), model.weights.at("w"))) << "repro.pt2 holds the model's own weight";
  const std::string out = work.path() + "/repro";
  WriteArtifacts(r, spec, options, out);
  EXPECT_THAT(ReadTextFile(out + "/report.md"), ::testing::HasSubstr("`repro.pt2` holds random: the repro's floating"));
  EXPECT_THAT(ReadTextFile(out + "/summary.json"), ::testing::HasSubstr("\"weights\": \"random\""));
  std::cout << "[aoti] | weight_relu random weights | " << r.nodes_before << " -> " << r.nodes_after << " nodes, "
            << r.compiles << " compiles |\n";
}

// The pool of compile servers: the same search on one server and on two ends at the same
// program by the same steps; the pool only compiles ahead, and every compile beyond one
// server's is counted as compiled ahead and not needed.
TEST(CompileServerPool, TheReductionIsTheSameWhateverThePoolSize) {
  TempDir work("aoti_reduce_pool_test");
  auto reduce = [&](int jobs) {
    const std::string dir = work.path() + "/jobs" + std::to_string(jobs);
    MakeDirs(dir);
    CompileClient client(ServerIn(dir));
    ReduceSpec spec;
    spec.package = FLAGS_packages_dir + "/log1p_relu_where_dd.pt2";
    spec.check = CheckOptionsFromFlags();
    ReduceOptions options;
    options.jobs = jobs;
    options.strategies = {"delta_debugging"};
    options.max_granularity = 1;  // one window per node: independent candidates, compiled two at a time
    return Reduce(spec, options, &client, dir, [&](const std::string& line) {
      std::cerr << "[jobs=" << jobs << "] " << line << "\n";
    });
  };
  const ReduceResult one = reduce(1);
  const ReduceResult two = reduce(2);
  EXPECT_EQ(one.jobs, 1);
  EXPECT_EQ(two.jobs, 2);
  EXPECT_EQ(FormatGraph(two.minimal), FormatGraph(one.minimal));
  EXPECT_EQ(two.minimal.ToJson(), one.minimal.ToJson());
  ASSERT_EQ(two.log.size(), one.log.size());
  for (size_t i = 0; i < one.log.size(); ++i) EXPECT_EQ(two.log[i].what, one.log[i].what) << "step " << i;
  EXPECT_EQ(one.speculative_compiles, 0);
  EXPECT_EQ(two.compiles - two.speculative_compiles, one.compiles);
  // The second server did compile.
  ASSERT_EQ(two.server_requests.size(), 2u);
  EXPECT_GT(two.server_requests[1], 0) << "the second compile server did nothing";
  std::cout << "[aoti] | pool | 1 server: " << one.compiles << " compiles, " << static_cast<int>(one.seconds + 0.5)
            << " s | 2 servers: " << two.compiles << " compiles (" << two.speculative_compiles
            << " ahead, not needed), " << static_cast<int>(two.seconds + 0.5) << " s |\n";
}

// The disk compile cache across runs: relu_cos_compile_error reduced (as a planted
// scenario is), then the same reduction run again, by a new compile server and a new oracle
// as a later run would be, compiles nothing and ends at the same repro.
TEST(CompileCacheAcrossRuns, ASecondRunOfTheSameReductionCompilesNothing) {
  TempDir work("aoti_reduce_cache_test");
  auto reduce = [&](const std::string& run) {
    MakeDirs(work.path() + "/" + run);
    CompileClient client(ServerIn(work.path() + "/" + run));
    ReduceSpec spec;
    spec.package = FLAGS_packages_dir + "/relu_cos_compile_error.pt2";
    spec.check = CheckOptionsFromFlags();
    ReduceOptions options;
    options.compile_cache.dir = work.path() + "/compile_cache";
    return Reduce(spec, options, &client, work.path() + "/" + run, [&](const std::string& line) {
      std::cerr << "[" << run << "] " << line << "\n";
    });
  };
  // The first run is also relu_cos_compile_error's planted scenario (upstream's relu/cos case).
  const ReduceResult first = reduce("first");
  EXPECT_EQ(first.disk_cache_hits, 0);
  EXPECT_EQ(first.compiles, 2) << "the search cost changed; update the pin if it improved";
  EXPECT_EQ(first.failure_class, "compile error");
  EXPECT_LE(first.nodes_after, 3u) << FormatGraph(first.minimal);
  EXPECT_THAT(OperatorNames(first.minimal), Contains("aten.relu.default")) << FormatGraph(first.minimal);
  EXPECT_TRUE(first.final_recheck_failed_again);
  const ReduceResult second = reduce("second");
  EXPECT_EQ(second.compiles, 0) << "a second run compiled again";
  EXPECT_EQ(second.disk_cache_hits, first.compiles);
  EXPECT_EQ(FormatGraph(second.minimal), FormatGraph(first.minimal));
  EXPECT_EQ(second.failure_class, first.failure_class);
  std::cout << "[aoti] | disk cache | first run " << first.compiles << " compiles, " << static_cast<int>(first.seconds + 0.5)
            << " s | second run " << second.compiles << " compiles (" << second.disk_cache_hits << " from the cache), "
            << static_cast<int>(second.seconds + 0.5) << " s |\n";
}

}  // namespace
}  // namespace aoti
