// repro.py judges as its test judged: a seeded check of a random model (compiled with
// fallback_random, so eager and the compiled model draw from one generator) passes, and its
// repro, seeded as the check was, passes too. Unseeded, the same repro draws other numbers
// in eager and the compiled model and reports an accuracy failure the test never had: what
// every seeded case's repro did before repro.py seeded.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/case/failing_case.h"
#include "harness/check/check.h"
#include "matchers/aoti_matches_eager.h"
#include "harness/archive/pt2_archive.h"
#include "harness/util/temp_dir.h"
#include "plugin/check_flags.h"
#include "plugin/flags.h"
#include "reducer/artifacts.h"
#include "reducer/reducer.h"

namespace aoti {
namespace {

using ::testing::HasSubstr;

constexpr char kPackage[] = "testdata/noisy_linear_fallback_random.pt2";

// RunRepro: writes the repro of the whole program as if its check had failed with an
// accuracy verdict under `check`, runs repro.py, and returns its exit status and output.
int RunRepro(const CheckOptions& check, const std::string& name, std::string* printed) {
  auto archive = Pt2Archive::Open(kPackage);
  ReduceResult r;
  r.original = r.minimal = Program::Parse(archive->ProgramJson("model"), name);
  r.model = "model";
  r.failure_class = "accuracy";
  r.message = "output 0 differs";
  r.final_archive = kPackage;
  r.inductor_configs_json = "{\"fallback_random\": true}";
  r.nodes_before = r.nodes_after = r.minimal.nodes.size();
  ReduceSpec spec;
  spec.package = kPackage;
  spec.check = check;
  TempDir dir(name);
  const std::string out = dir.path() + "/repro";
  WriteArtifacts(r, spec, ReduceOptions(), out);
  const std::string log = dir.path() + "/repro.log";
  const int status = std::system((FLAGS_aoti_python + " " + out + "/repro.py > " + log + " 2>&1").c_str());
  std::ifstream in(log);
  printed->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Seeded, TheReproDrawsWhatItsTestDrew) {
  ASSERT_FALSE(FLAGS_aoti_python.empty()) << "--aoti_python is required";
  CheckOptions check = CheckOptionsFromFlags();
  check.accuracy.mode = AccuracyMode::kStrict;
  check.runner.seed = 0;
  const CheckReport report = CheckAotiMatchesEager(kPackage, nullptr, check);
  ASSERT_TRUE(report.pass) << report.message;

  std::string printed;
  EXPECT_EQ(RunRepro(check, "seeded", &printed), 0) << printed;
  EXPECT_THAT(printed, HasSubstr("repro.py: passes"));

  // The control: the same repro unseeded draws other numbers on each side.
  check.runner.seed = -1;
  EXPECT_EQ(RunRepro(check, "unseeded", &printed), 1) << printed;
  EXPECT_THAT(printed, HasSubstr("repro.py: accuracy"));
}

// The failure message offers a reduction only for a failure of the compiler: a random
// model checked unseeded is "nondeterministic", which nothing reduces, so no "Reduce it"
// line (it offered one, and the command then refused).
TEST(FailureMessage, OffersNoReductionForAVerdictNothingReduces) {
  CheckOptions check = CheckOptionsFromFlags();
  check.runner.seed = -1;
  const ::testing::AssertionResult r = AotiMatchesEager(kPackage, nullptr, check);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.message(), HasSubstr("AOTI check failed (nondeterministic)"));
  // The first three lines: what failed, the culprit (none to reduce), where to look.
  std::vector<std::string> lines;
  ::testing::internal::SplitString(r.message(), '\n', &lines);
  ASSERT_GE(lines.size(), 4u) << r.message();
  EXPECT_THAT(lines[0], ::testing::StartsWith("AOTI check failed (nondeterministic): "));
  EXPECT_THAT(lines[1], ::testing::StartsWith("  Culprit: none to reduce (nondeterministic is not the compiler's failure)"));
  // bazel-testlogs/testdata/repro_exactness_test/test.outputs (under external/aoti_harness/ in suite/).
  EXPECT_EQ(lines[2], "  Open: " + TestOutputsDir() + "/aoti/FailureMessage.OffersNoReductionForAVerdictNothingReduces/ (diagnosis.md)");
  EXPECT_THAT(lines[2], HasSubstr("testdata/repro_exactness_test/test.outputs/aoti/"));
  EXPECT_EQ(lines[3], "  --- details ---");
  EXPECT_THAT(r.message(), ::testing::Not(HasSubstr("Reduce it")));
  EXPECT_THAT(r.message(), ::testing::Not(HasSubstr("DUMP_AOTI_MINIFIER")));
}

}  // namespace
}  // namespace aoti
