// A spent time budget: the reduction stops where it is, and the best repro so far is
// written and labelled as such (report.md, summary.json, report.html), rather than
// nothing at all. The budget is spent by the sanity check's compile.
#include <fstream>
#include <iostream>
#include <string>

#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/check_flags.h"
#include "harness/temp_dir.h"
#include "harness/tensor_bundle.h"
#include "reducer/artifacts.h"
#include "reducer/reducer.h"

DEFINE_string(python, "", "Python with torch, for the compile server");
DEFINE_string(compile_server, "", "tools/compile_server.py");

namespace aoti {
namespace {

using ::testing::HasSubstr;

TEST(TimeBudget, ASpentBudgetWritesTheBestReproSoFarLabelledAsSuch) {
  ASSERT_FALSE(FLAGS_python.empty()) << "--python is required";
  TempDir work("aoti_reduce_budget_test");
  CompileServerOptions server;
  server.python = FLAGS_python;
  server.server_script = FLAGS_compile_server;
  server.log_path = work.path() + "/compile_server.log";
  CompileClient client(server);
  ReduceSpec spec;
  spec.package = "testdata/reduce/block_compile_error.pt2";
  spec.check = CheckOptionsFromFlags();
  ReduceOptions options;
  options.time_budget_s = 0.001;
  const ReduceResult r = Reduce(spec, options, &client, work.path(), [](const std::string& line) {
    std::cerr << "[budget] " << line << "\n";
  });
  EXPECT_TRUE(r.budget_exhausted);
  EXPECT_EQ(r.failure_class, "compile error");
  EXPECT_GT(r.nodes_after, 1u) << "nothing can be reduced within the budget: the best so far is the original";
  EXPECT_TRUE(r.final_recheck_failed_again);
  EXPECT_FALSE(r.final_archive.empty());
  const std::string out = work.path() + "/repro";
  WriteArtifacts(r, spec, options, out);
  EXPECT_THAT(ReadTextFile(out + "/report.md"), HasSubstr("| time budget spent | yes: best result so far |"));
  EXPECT_THAT(ReadTextFile(out + "/summary.json"), HasSubstr("\"budget_exhausted\": true"));
  EXPECT_THAT(ReadTextFile(out + "/report.html"), HasSubstr("this is the best repro so far"));
  EXPECT_TRUE(std::ifstream(out + "/repro.pt2").good());
  EXPECT_TRUE(std::ifstream(out + "/repro.py").good());
  std::cout << "[aoti] | time budget | " << r.nodes_before << " -> " << r.nodes_after << " nodes, " << r.compiles
            << " compiles, " << static_cast<int>(r.seconds + 0.5) << " s |\n";
}

}  // namespace
}  // namespace aoti
