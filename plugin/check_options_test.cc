// The check options as one value: written once (CheckOptionsToJson, CaseFileToJson), read
// back once (CheckOptionsFromJson, ParseCaseFile), with every field a test can choose,
// and flags laid over a case's options only where given.
#include <cstdlib>
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/case/case_file.h"
#include "plugin/check_flags.h"
#include "harness/check/check_options.h"
#include "harness/util/errors.h"
#include "plugin/flags.h"
#include "harness/util/temp_dir.h"
#include "harness/archive/tensor_bundle.h"

namespace aoti {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// Every field away from its default.
CheckOptions Chosen() {
  CheckOptions o;
  o.model = "classifier";
  o.accuracy.mode = AccuracyMode::kAssertClose;
  o.accuracy.tol = 2e-4;
  o.accuracy.rtol = 1e-5;
  o.accuracy.atol = 3e-5;
  o.accuracy.ignore_non_fp = true;
  o.accuracy.exact_non_fp = true;
  o.judged_outputs = 2;
  o.reruns = 5;
  o.votes = 6;
  o.runner.isolate = false;
  o.runner.timeout_s = 42.5;
  o.runner.op_libraries = {"/case/op_libraries/libops.so", "/elsewhere/libother.so"};
  o.runner.pytree_modules = {"transformers.modeling_outputs", "team_outputs"};
  o.runner.runtime_check_inputs = true;
  o.runner.seed = 7;
  o.runner.env = {{"OMP_NUM_THREADS", "1"}, {"EMPTY", ""}};
  o.runner.env_pass_through = {"TORCH_LOGS"};
  return o;
}

void ExpectSame(const CheckOptions& a, const CheckOptions& b) {
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.accuracy.mode, b.accuracy.mode);
  EXPECT_EQ(a.accuracy.tol, b.accuracy.tol);
  EXPECT_EQ(a.accuracy.rtol, b.accuracy.rtol);
  EXPECT_EQ(a.accuracy.atol, b.accuracy.atol);
  EXPECT_EQ(a.accuracy.ignore_non_fp, b.accuracy.ignore_non_fp);
  EXPECT_EQ(a.accuracy.exact_non_fp, b.accuracy.exact_non_fp);
  EXPECT_EQ(a.judged_outputs, b.judged_outputs);
  EXPECT_EQ(a.reruns, b.reruns);
  EXPECT_EQ(a.votes, b.votes);
  EXPECT_EQ(a.runner.isolate, b.runner.isolate);
  EXPECT_EQ(a.runner.timeout_s, b.runner.timeout_s);
  EXPECT_EQ(a.runner.op_libraries, b.runner.op_libraries);
  EXPECT_EQ(a.runner.pytree_modules, b.runner.pytree_modules);
  EXPECT_EQ(a.runner.runtime_check_inputs, b.runner.runtime_check_inputs);
  EXPECT_EQ(a.runner.seed, b.runner.seed);
  EXPECT_EQ(a.runner.env, b.runner.env);
  EXPECT_EQ(a.runner.env_pass_through, b.runner.env_pass_through);
}

TEST(CheckOptionsJson, EveryFieldComesBack) {
  const CheckOptions o = Chosen();
  ExpectSame(CheckOptionsFromJson(nlohmann::json::parse(CheckOptionsToJson(o).dump()), "t"), o);
  ExpectSame(CheckOptionsFromJson(CheckOptionsToJson(CheckOptions{}), "t"), CheckOptions{});
}

TEST(CheckOptionsJson, EveryModeHasOneSpelling) {
  for (AccuracyMode m : {AccuracyMode::kFp64Rmse, AccuracyMode::kStrict, AccuracyMode::kAssertClose}) {
    CheckOptions o;
    o.accuracy.mode = m;
    const auto j = CheckOptionsToJson(o);
    EXPECT_EQ(j["accuracy"]["mode"], AccuracyModeName(m));
    EXPECT_EQ(CheckOptionsFromJson(j, "t").accuracy.mode, m);
    EXPECT_EQ(ParseAccuracyMode(AccuracyModeName(m), "x"), m);
  }
}

TEST(CheckOptionsJson, OpLibrariesInsideTheDirectoryAreRelative) {
  const auto j = CheckOptionsToJson(Chosen(), "/case");
  EXPECT_EQ(j["runner"]["op_libraries"][0], "op_libraries/libops.so");
  EXPECT_EQ(j["runner"]["op_libraries"][1], "/elsewhere/libother.so");
  // Read back elsewhere (the case unzipped into /tmp/x), the relative one lies there.
  EXPECT_THAT(CheckOptionsFromJson(j, "t", "/tmp/x").runner.op_libraries,
              ElementsAre("/tmp/x/op_libraries/libops.so", "/elsewhere/libother.so"));
}

TEST(CheckOptionsJson, BadFieldsAreNamed) {
  auto error = [](const std::string& text) {
    try {
      CheckOptionsFromJson(nlohmann::json::parse(text), "case.json: check_options");
    } catch (const HarnessError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error(R"({"accuracy": {"mode": "close_enough"}})"),
              AllOf(HasSubstr("check_options.accuracy.mode"), HasSubstr("close_enough"), HasSubstr("assert_close")));
  EXPECT_THAT(error(R"({"accuracy": {"tolerance": -1}})"),
              AllOf(HasSubstr("accuracy.tolerance"), HasSubstr(">= 0")));
  EXPECT_THAT(error(R"({"accuracy": {"rtol": "1e-5"}})"), AllOf(HasSubstr("accuracy.rtol"), HasSubstr("a number")));
  EXPECT_THAT(error(R"({"accuracy": {"tolerence": 0.1}})"),
              AllOf(HasSubstr("unknown field 'tolerence'"), HasSubstr("tolerance")));
  EXPECT_THAT(error(R"({"runner": {"timeout_s": 0}})"), AllOf(HasSubstr("runner.timeout_s"), HasSubstr("> 0")));
  EXPECT_THAT(error(R"({"runner": {"isolation": "thread"}})"), HasSubstr("child or in_process"));
  EXPECT_THAT(error(R"({"runner": {"env": ["NOVALUE"]}})"), HasSubstr("'NOVALUE' is not NAME=VALUE"));
  EXPECT_THAT(error(R"({"runner": {"op_libraries": "libx.so"}})"), HasSubstr("an array of strings"));
  for (const char* bad : {"", "os;rm", "a..b", ".a", "a.", "1a", "a b"}) {
    EXPECT_THAT(error(std::string(R"({"runner": {"pytree_modules": [")") + bad + R"("]}})"),
                AllOf(HasSubstr("runner.pytree_modules"), HasSubstr("a Python module name")))
        << bad;
  }
  EXPECT_THAT(error(R"({"judged_outputs": -2})"), HasSubstr("judged_outputs"));
  EXPECT_THAT(error(R"({"runner": {"seed": -1}})"), AllOf(HasSubstr("runner.seed"), HasSubstr(">= 0")));
  EXPECT_THAT(error(R"({"votes": 0})"), AllOf(HasSubstr("votes"), HasSubstr("from 1 to 50")));
  EXPECT_THAT(error(R"({"reruns": 1.5})"), AllOf(HasSubstr("reruns"), HasSubstr("a whole number")));
  EXPECT_THAT(error(R"([1])"), HasSubstr("expected an object"));
}

TEST(CaseFile, WrittenAndReadOnceWithItsOptions) {
  TempDir dir("case_file_test");
  CaseFile c;
  c.test = "UserOptions.AssertCloseMode";
  c.package = dir.path() + "/original.pt2";
  c.failure_class = "accuracy";
  c.message = "1 of 1 outputs differ";
  c.inductor_configs_json = R"({"cpp.inject_log1p_bug_TESTING_ONLY": "accuracy"})";
  c.inputs_dir = dir.path() + "/inputs";
  c.options = Chosen();
  c.options.runner.op_libraries = {dir.path() + "/op_libraries/libops.so"};
  const auto j = CaseFileToJson(c, dir.path());
  EXPECT_EQ(j["package"], "original.pt2");
  EXPECT_EQ(j["inputs"], "inputs");
  EXPECT_EQ(j["check_options"]["accuracy"]["mode"], "assert_close");
  const CaseFile back = ParseCaseFile(j.dump(), dir.path());
  EXPECT_EQ(back.package, c.package);
  EXPECT_EQ(back.inputs_dir, c.inputs_dir);
  EXPECT_EQ(back.failure_class, "accuracy");
  EXPECT_EQ(back.test, c.test);
  EXPECT_EQ(nlohmann::json::parse(back.inductor_configs_json), nlohmann::json::parse(c.inductor_configs_json));
  ExpectSame(back.options, c.options);
}

TEST(CaseFile, AnOlderHarnessCaseIsRead) {
  const CaseFile f = ParseCaseFile(
      R"({"format": "aoti_harness.case/1", "package": "original.pt2", "model": "model", "failure_class": "accuracy",
          "accuracy": {"mode": "assert_close", "tolerance": 0.01}})",
      "/c");
  EXPECT_EQ(f.package, "/c/original.pt2");
  EXPECT_EQ(f.options.model, "model");
  EXPECT_EQ(f.options.accuracy.mode, AccuracyMode::kAssertClose);
  EXPECT_EQ(f.options.accuracy.tol, 0.01);
}

TEST(CheckFlags, AFileOfOptionsWithFlagsGivenOverIt) {
  TempDir dir("check_flags_test");
  CaseFile c;
  c.package = dir.path() + "/original.pt2";
  c.options = Chosen();
  c.options.runner.op_libraries = {};
  WriteTextFile(dir.path() + "/case.json", CaseFileToJson(c, dir.path()).dump());
  WriteTextFile(dir.path() + "/check_options.json", CheckOptionsToJson(c.options, dir.path()).dump());
  // The case's options and a repro's options file read alike.
  ExpectSame(ReadCheckOptionsFile(dir.path() + "/case.json"), c.options);
  ExpectSame(ReadCheckOptionsFile(dir.path() + "/check_options.json"), c.options);
  // No flag given: the base as it is (the defaults of the flags do not leak over it).
  ExpectSame(CheckOptionsFromFlags(&c.options), c.options);
  // A flag given on the command line overrides its field alone.
  gflags::SetCommandLineOption("aoti_tolerance", "0.05");
  const CheckOptions over = CheckOptionsFromFlags(&c.options);
  EXPECT_EQ(over.accuracy.tol, 0.05);
  EXPECT_EQ(over.accuracy.mode, AccuracyMode::kAssertClose);
  EXPECT_EQ(over.accuracy.rtol, 1e-5);
  EXPECT_EQ(over.runner.timeout_s, 42.5);
  // --aoti_check_options names the file.
  gflags::SetCommandLineOption("aoti_check_options", (dir.path() + "/check_options.json").c_str());
  EXPECT_EQ(CheckOptionsFromFlags().model, "classifier");
  EXPECT_EQ(CheckOptionsFromFlags().accuracy.tol, 0.05);
  gflags::SetCommandLineOption("aoti_check_options", (dir.path() + "/missing.json").c_str());
  EXPECT_THROW(CheckOptionsFromFlags(), HarnessError);
}

// Options a test builds by hand (CheckOptions{}, as a team's own assert_close test does)
// run under the test's deadline too, not without one.
TEST(CheckOptions, OptionsBuiltByHandRunUnderTheTestsDeadline) {
  const char* before = std::getenv("TEST_TIMEOUT");
  const std::string saved = before ? before : "";
  ::setenv("TEST_TIMEOUT", "120", 1);
  const CheckOptions by_hand;
  EXPECT_TRUE(by_hand.runner.deadline.set());
  EXPECT_LT(by_hand.runner.deadline.SecondsLeft(), 120);
  EXPECT_NE(by_hand.runner.deadline.what().find("TEST_TIMEOUT of 120 s"), std::string::npos)
      << by_hand.runner.deadline.what();
  if (before) ::setenv("TEST_TIMEOUT", saved.c_str(), 1); else ::unsetenv("TEST_TIMEOUT");
}

}  // namespace
}  // namespace aoti
