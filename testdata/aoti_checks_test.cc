// EXPECT_AOTI_MATCHES_EAGER, one test per cause: each healthy model passes, and each
// planted problem fails for the right reason with the right words.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <ATen/ops/equal.h>
#include <ATen/ops/randn.h>
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "plugin/check_flags.h"
#include "harness/case/failing_case.h"
#include "harness/archive/pt2_archive.h"
#include "harness/archive/tensor_io.h"
#include "matchers/aoti_matches_eager.h"

DEFINE_string(healthy_fp32, "", "mlp, float32");
DEFINE_string(healthy_fp16, "", "mlp, float16");
DEFINE_string(healthy_bf16, "", "mlp, bfloat16");
DEFINE_string(relu_accuracy, "", "mlp with cpp.inject_relu_bug_TESTING_ONLY=accuracy");
DEFINE_string(relu_runtime_error, "", "mlp with cpp.inject_relu_bug_TESTING_ONLY=runtime_error");
DEFINE_string(relu_compile_error, "", "mlp with cpp.inject_relu_bug_TESTING_ONLY=compile_error");
DEFINE_string(crash_op, "", "a model whose custom op segfaults");
DEFINE_string(input_mutation, "", "a model that mutates its user inputs in place");
DEFINE_string(fp64_fallback, "", "a model whose float64 run fails");

namespace aoti {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

CheckReport Check(const std::string& package, const std::vector<at::Tensor>* inputs = nullptr) {
  return CheckAotiMatchesEager(package, inputs, CheckOptionsFromFlags());
}

TEST(Healthy, EachDtypePasses) {
  for (const std::string* p : {&FLAGS_healthy_fp32, &FLAGS_healthy_fp16, &FLAGS_healthy_bf16}) {
    SCOPED_TRACE(*p);
    EXPECT_AOTI_MATCHES_EAGER(*p);
  }
}

TEST(Healthy, InProcessModePasses) {
  CheckOptions options = CheckOptionsFromFlags();
  options.runner.isolate = false;
  auto archive = Pt2Archive::Open(FLAGS_healthy_fp32);
  EXPECT_AOTI_MATCHES_EAGER(FLAGS_healthy_fp32, archive->SampleInputs(), options);
}

TEST(PlantedBugs, ReluAccuracyFailsNamingOutputAndElement) {
  const CheckReport r = Check(FLAGS_relu_accuracy);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.failure_class, "accuracy");
  EXPECT_THAT(r.message, AllOf(HasSubstr("output 0 'log_softmax' (float32[8, 10])"),
                               HasSubstr("RMSE against float64 exceeds the bound"),
                               HasSubstr("Mismatched elements: "), HasSubstr("Greatest absolute difference: "),
                               HasSubstr("At index ("), HasSubstr(", fp64 "), HasSubstr("RMSE(compiled, fp64) = ")));
  EXPECT_NONFATAL_FAILURE(EXPECT_AOTI_MATCHES_EAGER(FLAGS_relu_accuracy), "AOTI check failed (accuracy)");
}

TEST(PlantedBugs, ReluRuntimeErrorIsARuntimeErrorWithItsMessage) {
  const CheckReport r = Check(FLAGS_relu_runtime_error);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.failure_class, "runtime error") << r.message;
  EXPECT_THAT(r.message, HasSubstr("the compiled model raised"));
  EXPECT_THAT(r.outcome.stderr_text, HasSubstr("Unknown exception"));
}

TEST(PlantedBugs, CompileErrorCarriesTheCompilersError) {
  const CheckReport r = Check(FLAGS_relu_compile_error);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.failure_class, "compile error");
  EXPECT_THAT(r.message, AllOf(HasSubstr("AOTI compile failed"), HasSubstr("error:"), HasSubstr("compile error!"),
                               Not(HasSubstr("no such file"))));
}

// x.add_(1) on a user input: each run (compiled, eager, fp64) starts from the inputs as
// given, in both isolation modes, and the caller's tensors and the recorded case stay as
// they were.
TEST(Mutation, InputMutatingModelPassesAndLeavesTheInputsAlone) {
  auto archive = Pt2Archive::Open(FLAGS_input_mutation);
  for (bool isolate : {true, false}) {
    SCOPED_TRACE(isolate ? "child" : "in_process");
    const std::vector<at::Tensor> inputs = archive->SampleInputs();
    const std::vector<at::Tensor> before = CopyOf(inputs);
    CheckOptions options = CheckOptionsFromFlags();
    options.runner.isolate = isolate;
    TakeFailingCases();
    EXPECT_AOTI_MATCHES_EAGER(FLAGS_input_mutation, inputs, options);
    for (size_t i = 0; i < inputs.size(); ++i) EXPECT_TRUE(at::equal(inputs[i], before[i])) << "input " << i;
    // A check that fails after every run (a tolerance the comparison refuses) records the
    // inputs as given.
    options.accuracy.tol = -1;
    CheckReport report;
    EXPECT_FALSE(AotiMatchesEager(FLAGS_input_mutation, &inputs, options, &report));
    EXPECT_EQ(report.failure_class, "harness error");
    EXPECT_THAT(report.message, HasSubstr("comparing output 0 failed"));
    const auto cases = TakeFailingCases();
    ASSERT_EQ(cases.size(), 1u);
    for (size_t i = 0; i < inputs.size(); ++i) EXPECT_TRUE(at::equal(cases[0].inputs[i], before[i])) << "case input " << i;
  }
}

// The float64 run fails: the check falls back to eager as the reference (as upstream's
// same_two_models does) and says so; it is not a harness error. Strict mode runs no fp64.
TEST(Fp64, AFailedFloat64RunFallsBackAndSaysSo) {
  const CheckReport r = Check(FLAGS_fp64_fallback);
  EXPECT_TRUE(r.pass) << r.failure_class << ": " << r.message;
  EXPECT_THAT(r.fp64_note, AllOf(HasSubstr("float64 run failed"), HasSubstr("judged against eager")));
  CheckOptions strict = CheckOptionsFromFlags();
  strict.accuracy.mode = AccuracyMode::kStrict;
  const CheckReport s = CheckAotiMatchesEager(FLAGS_fp64_fallback, nullptr, strict);
  EXPECT_TRUE(s.pass) << s.message;
  EXPECT_EQ(s.fp64_note, "");
}

TEST(Preflight, WrongShape) {
  const std::vector<at::Tensor> in = {at::randn({4, 32})};
  const CheckReport r = Check(FLAGS_healthy_fp32, &in);
  EXPECT_EQ(r.failure_class, "preflight");
  EXPECT_THAT(r.message, HasSubstr("input 0 'x': has shape [4, 32], expected [8, 32] (dim 0 is 4, expected 8)"));
}

TEST(Preflight, WrongDtype) {
  const std::vector<at::Tensor> in = {at::randn({8, 32}, at::kDouble)};
  const CheckReport r = Check(FLAGS_healthy_fp32, &in);
  EXPECT_EQ(r.failure_class, "preflight");
  EXPECT_THAT(r.message, HasSubstr("input 0 'x': has dtype float64, expected float32"));
}

TEST(Preflight, NonContiguousInput) {
  const std::vector<at::Tensor> in = {at::randn({32, 8}).t()};
  const CheckReport r = Check(FLAGS_healthy_fp32, &in);
  EXPECT_EQ(r.failure_class, "preflight");
  EXPECT_THAT(r.message, HasSubstr("input 0 'x': has strides [1, 8] (not contiguous), expected strides [32, 1]"));
}

TEST(Preflight, WrongInputCount) {
  const std::vector<at::Tensor> in = {at::randn({8, 32}), at::randn({8, 32})};
  const CheckReport r = Check(FLAGS_healthy_fp32, &in);
  EXPECT_EQ(r.failure_class, "preflight");
  EXPECT_THAT(r.message, HasSubstr("the program takes 1 tensor inputs, 2 were given"));
}

// The directories libtorch's loader extracts packages into, under $TMPDIR.
int ExtractedPackageDirs() {
  const char* tmp = std::getenv("TMPDIR");
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp && *tmp ? tmp : "/tmp")) {
    if (e.path().filename().string().rfind("aotinductor_", 0) == 0) ++n;
  }
  return n;
}

TEST(Isolation, SegfaultInACustomOpIsReportedAndTheTestSurvives) {
  const int extracted_before = ExtractedPackageDirs();
  ::setenv("AOTI_TEST_NULL_DEREF", "1", 1);  // arms the op in the child; eager never runs it
  const CheckReport r = Check(FLAGS_crash_op);
  ::unsetenv("AOTI_TEST_NULL_DEREF");
  EXPECT_EQ(ExtractedPackageDirs(), extracted_before) << "the crashed child left its extracted package behind";
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.failure_class, "signal SIGSEGV") << r.message;
  EXPECT_EQ(r.outcome.signal, SIGSEGV);
  EXPECT_THAT(r.message, HasSubstr("died of SIGSEGV (Segmentation fault)"));
  // Run again for its rate: it crashes every time, so it is not flaky.
  EXPECT_EQ(r.runs, 4);
  EXPECT_EQ(r.runs_failed, 4);
  EXPECT_FALSE(r.flaky);
  EXPECT_THAT(r.message, Not(HasSubstr("flaky")));
}

// Sets the count of aoti_test::null_deref's calls under AOTI_TEST_FLAKY=1 (test_ops.cc): the
// next call fails when the count is even.
void SetFlakyCalls(int calls) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::ofstream(std::string(dir ? dir : "/tmp") + "/aoti_test_flaky_calls", std::ios::trunc) << calls;
}

// A failure that comes and goes: aoti_test::null_deref returns x + 1 on every other call of
// the compiled run (AOTI_TEST_FLAKY=1 in the runner only; eager is right). The check runs it
// again, reports it flaky with its rate, and a vote over runs catches what one run misses.
TEST(Flaky, AFailureThatComesAndGoesIsReportedWithItsRate) {
  CheckOptions options = CheckOptionsFromFlags();
  options.runner.env.emplace_back("AOTI_TEST_FLAKY", "1");
  SetFlakyCalls(0);
  const CheckReport r = CheckAotiMatchesEager(FLAGS_crash_op, nullptr, options);
  EXPECT_EQ(r.failure_class, "accuracy") << r.message;
  EXPECT_TRUE(r.flaky);
  EXPECT_TRUE(r.outputs_vary);
  EXPECT_EQ(r.runs, 4);
  EXPECT_EQ(r.runs_failed, 2);
  EXPECT_THAT(r.message, HasSubstr("flaky: it failed 2 of 4 runs of the compiled model on the same inputs"));
  EXPECT_THAT(r.message, HasSubstr("any of 5 runs fails"));
  EXPECT_EQ(VotesFor(2, 4), 5);

  // One run that happens to pass passes ...
  options.reruns = 0;
  SetFlakyCalls(1);
  const CheckReport once = CheckAotiMatchesEager(FLAGS_crash_op, nullptr, options);
  EXPECT_TRUE(once.pass) << once.message;
  EXPECT_EQ(once.runs, 1);
  // ... and a vote sees the failure at the next run.
  options.votes = VotesFor(2, 4);
  SetFlakyCalls(1);
  const CheckReport voted = CheckAotiMatchesEager(FLAGS_crash_op, nullptr, options);
  EXPECT_EQ(voted.failure_class, "accuracy") << voted.message;
  EXPECT_EQ(voted.runs, 2);
  EXPECT_EQ(voted.runs_failed, 1);
  EXPECT_TRUE(voted.flaky);
}

// Processes (other than this one) whose environment holds `entry`.
int ProcessesWithEnvironment(const std::string& entry) {
  int found = 0;
  for (const auto& p : std::filesystem::directory_iterator("/proc")) {
    const std::string name = p.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos || name == std::to_string(::getpid())) continue;
    std::ifstream in(p.path() / "environ", std::ios::binary);
    const std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (env.find(entry + '\0') != std::string::npos || env.find('\0' + entry) != std::string::npos) ++found;
  }
  return found;
}

// A kernel that never returns (aoti_test::null_deref with AOTI_TEST_HANG=1): the runner
// is killed at the timeout, with its whole process group, and leaves nothing behind.
TEST(Isolation, TimeoutKillsAHungModel) {
  const int extracted_before = ExtractedPackageDirs();
  ::setenv("AOTI_TEST_HANG", "1", 1);  // in the child only: eager never runs the op here
  CheckOptions options = CheckOptionsFromFlags();
  options.runner.timeout_s = 8;
  const auto start = std::chrono::steady_clock::now();
  const CheckReport r = CheckAotiMatchesEager(FLAGS_crash_op, nullptr, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::unsetenv("AOTI_TEST_HANG");
  EXPECT_EQ(r.failure_class, "timeout") << r.message;
  EXPECT_THAT(r.message, HasSubstr("ran past the timeout"));
  EXPECT_LT(seconds, 60) << "the check waited on the hung child";
  EXPECT_EQ(ProcessesWithEnvironment("AOTI_TEST_HANG=1"), 0) << "a hung runner survived";
  EXPECT_EQ(ExtractedPackageDirs(), extracted_before) << "the killed child left its extracted package behind";
}

TEST(FailingCases, AreRecordedForTheReducer) {
  TakeFailingCases();
  EXPECT_FALSE(AotiMatchesEager(FLAGS_relu_accuracy));
  const auto cases = TakeFailingCases();
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].failure_class, "accuracy");
  EXPECT_EQ(cases[0].test_name, "FailingCases.AreRecordedForTheReducer");
  EXPECT_THAT(cases[0].inductor_configs_json, HasSubstr("inject_relu_bug_TESTING_ONLY"));
  ASSERT_EQ(cases[0].inputs.size(), 1u);
  if (std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    struct stat st {};
    EXPECT_EQ(::stat((cases[0].directory + "/case.json").c_str(), &st), 0) << cases[0].directory;
    EXPECT_EQ(::stat((cases[0].directory + "/inputs/manifest.json").c_str(), &st), 0);
  }
}

// Two failing checks in one test: two case directories, neither overwriting the other.
TEST(FailingCases, SeveralInOneTestGetTheirOwnDirectories) {
  if (!std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) GTEST_SKIP() << "needs Bazel's test outputs";
  TakeFailingCases();
  EXPECT_FALSE(AotiMatchesEager(FLAGS_relu_accuracy));
  EXPECT_FALSE(AotiMatchesEager(FLAGS_relu_runtime_error));
  const auto cases = TakeFailingCases();
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_NE(cases[0].directory, cases[1].directory);
  EXPECT_EQ(cases[1].directory, cases[0].directory + "/2");
  for (const auto& c : cases) {
    std::ifstream in(c.directory + "/case.json");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_THAT(text, HasSubstr("\"failure_class\": \"" + c.failure_class + "\"")) << c.directory;
  }
}

}  // namespace
}  // namespace aoti
