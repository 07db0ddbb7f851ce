// A time budget is a deadline: the reduction ends within it, whatever a compile would
// take, and the best repro so far is written and labelled as such (report.md,
// summary.json, report.html), rather than nothing at all. Here the budget (3 s) is shorter
// than the sanity check's compile: the compile is stopped at the budget, nothing runs again,
// and the repro is the original, labelled as not reduced.
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>

#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugin/check_flags.h"
#include "harness/util/temp_dir.h"
#include "harness/archive/tensor_bundle.h"
#include "reducer/artifacts.h"
#include "reducer/reducer.h"

DEFINE_string(python, "", "Python with torch, for the compile server");
DEFINE_string(compile_server, "", "tools/compile_server.py");

namespace aoti {
namespace {

using ::testing::HasSubstr;

TEST(TimeBudget, TheReductionEndsWithinItsBudgetAndWritesTheBestReproSoFarLabelledAsSuch) {
  ASSERT_FALSE(FLAGS_python.empty()) << "--python is required";
  TempDir work("aoti_reduce_budget_test");
  CompileServerOptions server;
  server.python = FLAGS_python;
  server.server_script = FLAGS_compile_server;
  server.log_path = work.path() + "/compile_server.log";
  CompileClient client(server);
  ReduceSpec spec;
  spec.package = "testdata/reduce/block_compile_error.pt2";
  spec.failure_class = "compile error";
  spec.failure_message = "as the test saw it";
  spec.check = CheckOptionsFromFlags();
  ReduceOptions options;
  options.time_budget_s = 3;
  const auto start = std::chrono::steady_clock::now();
  const ReduceResult r = Reduce(spec, options, &client, work.path(), [](const std::string& line) {
    std::cerr << "[budget] " << line << "\n";
  });
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The budget counts from Reduce's start; what follows it (the result, no compile, no
  // run) takes well under a second here. 2 s of slack for a loaded machine.
  EXPECT_LE(wall, options.time_budget_s + 2) << "the reduction outlasted its budget";
  EXPECT_TRUE(r.budget_exhausted);
  EXPECT_FALSE(r.sanity_checked) << "a 3 s budget cannot hold the sanity check's compile";
  EXPECT_FALSE(r.final_rechecked) << "nothing runs again once the time is out";
  EXPECT_EQ(r.failure_class, "compile error");
  EXPECT_EQ(r.nodes_after, r.nodes_before) << "the best so far is the original";
  EXPECT_EQ(r.message, "as the test saw it");
  const std::string out = work.path() + "/repro";
  WriteArtifacts(r, spec, options, out);
  EXPECT_THAT(ReadTextFile(out + "/report.md"),
              HasSubstr("| time budget spent | yes, during the sanity check: the repro is the original"));
  EXPECT_THAT(ReadTextFile(out + "/report.md"), HasSubstr("| final result failed again on re-check | not re-run"));
  EXPECT_THAT(ReadTextFile(out + "/summary.json"), HasSubstr("\"budget_exhausted\": true"));
  EXPECT_THAT(ReadTextFile(out + "/summary.json"), HasSubstr("\"sanity_checked\": false"));
  EXPECT_THAT(ReadTextFile(out + "/report.html"), HasSubstr("this is the best repro so far"));
  EXPECT_TRUE(std::ifstream(out + "/repro.py").good());
  std::cout << "[aoti] | time budget | " << options.time_budget_s << " s budget, " << wall << " s wall, "
            << r.nodes_before << " -> " << r.nodes_after << " nodes, " << r.compiles << " compiles |\n";
}

}  // namespace
}  // namespace aoti
