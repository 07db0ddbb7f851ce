// bisect-torch's logic on stand-in torches: each "python" here is a shell script that
// answers the probe as a torch release would (its version, inductor's defaults) and runs
// "repro.py" with the exit status that release's repro would have. The real thing, on
// real torches, is measured by tools/torch_matrix.sh's virtualenvs (docs/figures.md).
#include "reducer/torch_bisect.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/archive/tensor_bundle.h"
#include "harness/util/errors.h"
#include "harness/util/temp_dir.h"

namespace aoti {
namespace {

std::string g_junit_xsd;  // --junit_xsd: Jenkins' JUnit schema

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;

// A stand-in torch: `python torch_probe.py --config` prints its probe; `python repro.py`
// prints repro.py's lines and exits with `repro_exit`.
std::string FakeTorch(const std::string& dir, const std::string& version, const json& config, int repro_exit) {
  const std::string path = dir + "/python-" + version;
  const json probe = {{"version", version}, {"git_version", "g" + version}, {"cuda", nullptr}, {"inductor_config", config}};
  std::ofstream(path) << "#!/bin/sh\n"
                      << "case \"$1\" in\n"
                      << "  *torch_probe.py) echo 'a warning first'; echo '" << probe.dump() << "' ;;\n"
                      << "  *repro.py) echo 'repro.py: torch " << version << "'; echo 'repro.py: accuracy: output 0';"
                      << " echo 'repro.py: exit " << repro_exit << "'; exit " << repro_exit << " ;;\n"
                      << "esac\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

class TorchBisectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repro_ = dir_.path() + "/repro";
    std::filesystem::create_directories(repro_);
    std::ofstream(repro_ + "/repro.py") << "# stand-in\n";
    std::ofstream(repro_ + "/case.json")
        << R"({"package": "original.pt2", "failure_class": "accuracy", "inductor_configs": {"cpp.inject_relu_bug_TESTING_ONLY": "accuracy", "realize_opcount_threshold": "8", "aoti_harness.aten_fallbacks": "aten.cos"}})";
    std::ofstream(repro_ + "/summary.json") << R"({"reduced": true, "compiles": 2})";
    std::ofstream(repro_ + "/report.md") << "# Repro\n\nThe reducer's report.\n";
    options_.probe_script = dir_.path() + "/torch_probe.py";
  }

  TempDir dir_{"torch_bisect_test"};
  std::string repro_;
  TorchBisectOptions options_;
};

const json kOld = {{"cpp.inject_relu_bug_TESTING_ONLY", nullptr}, {"realize_opcount_threshold", 30}, {"force_same_precision", true}};
const json kNew = {{"cpp.inject_relu_bug_TESTING_ONLY", nullptr}, {"realize_opcount_threshold", nullptr}, {"cpp.march", ""}};

TEST_F(TorchBisectTest, NamesTheNewestThatPassesAndTheOldestThatFails) {
  // Given out of order, with one Python that has no torch at all.
  options_.pythons = {FakeTorch(dir_.path(), "2.14.1+cu130", kNew, 1), FakeTorch(dir_.path(), "2.12.1+cu130", kOld, 0),
                      FakeTorch(dir_.path(), "2.15.0", kNew, 1), FakeTorch(dir_.path(), "2.13.0+cpu", kOld, 0),
                      dir_.path() + "/no-such-python"};
  std::vector<std::string> said;
  const TorchBisect b = BisectTorch(repro_, options_, [&](const std::string& s) { said.push_back(s); });
  ASSERT_EQ(b.runs.size(), 5u);
  EXPECT_EQ(b.runs[0].verdict, TorchVerdict::kCannotRun);  // the one without torch, first
  EXPECT_EQ(b.runs[1].torch.version, "2.12.1+cu130");
  EXPECT_EQ(b.runs[4].torch.version, "2.15.0");
  EXPECT_EQ(b.kind, "regression");
  EXPECT_TRUE(b.monotonic);
  EXPECT_EQ(b.runs[b.newest_passing].torch.version, "2.13.0+cpu");
  EXPECT_EQ(b.runs[b.oldest_failing].torch.version, "2.14.1+cu130");
  EXPECT_THAT(b.answer, HasSubstr("Broken between torch 2.13.0+cpu (the newest that passes) and 2.14.1+cu130"));
  // The repro's configs set a key whose default changed; the harness's own key is not inductor's.
  EXPECT_THAT(b.configs_named, ElementsAre("realize_opcount_threshold"));
  EXPECT_EQ(b.config_diff["changed"]["realize_opcount_threshold"], json::array({30, nullptr}));
  EXPECT_TRUE(b.config_diff["added"].contains("cpp.march"));
  EXPECT_TRUE(b.config_diff["removed"].contains("force_same_precision"));
  EXPECT_THAT(b.runs[2].said, HasSubstr("accuracy: output 0"));
  EXPECT_THAT(said, testing::Contains(HasSubstr("torch 2.14.1+cu130: reproduces")));

  WriteTorchBisect(b, repro_);
  const std::string report = ReadTextFile(repro_ + "/report.md");
  EXPECT_THAT(report, HasSubstr("The reducer's report."));
  EXPECT_THAT(report, HasSubstr("## Which torch broke it"));
  EXPECT_THAT(report, HasSubstr("| 2.13.0+cpu (newest that passes) | CPU | passes |"));
  EXPECT_THAT(report, HasSubstr("`realize_opcount_threshold`: `30` → `null`"));
  const json summary = json::parse(ReadTextFile(repro_ + "/summary.json"));
  EXPECT_EQ(summary["compiles"], 2);  // the reducer's figures kept
  EXPECT_EQ(summary["torch_bisect"]["newest_passing"], "2.13.0+cpu");
  EXPECT_EQ(summary["torch_bisect"]["oldest_failing"], "2.14.1+cu130");
  EXPECT_EQ(summary["torch_bisect"]["runs"][1]["log"], "torch_bisect/2.12.1+cu130.log");
  const std::string xml = ReadTextFile(repro_ + "/test.xml");
  EXPECT_THAT(xml, HasSubstr("tests=\"5\" failures=\"2\" errors=\"0\" skipped=\"1\""));
  EXPECT_THAT(xml, HasSubstr("<property name=\"aoti_torch_oldest_failing\" value=\"2.14.1+cu130\"/>"));
  EXPECT_THAT(ReadTextFile(repro_ + "/torch_bisect/2.15.0.log"), HasSubstr("repro.py: torch 2.15.0"));
  // Valid JUnit, as a CI page reads it (the schema tools/ci_lint.sh checks collected files by).
  ASSERT_FALSE(g_junit_xsd.empty()) << "--junit_xsd is required";
  const std::string lint = "xmllint --noout --schema '" + g_junit_xsd + "' '" + repro_ + "/test.xml' 2>&1";
  EXPECT_EQ(std::system(lint.c_str()), 0) << lint;

  // A second bisect replaces its section rather than adding another.
  WriteTorchBisect(b, repro_);
  const std::string again = ReadTextFile(repro_ + "/report.md");
  EXPECT_EQ(again.find("## Which torch broke it"), again.rfind("## Which torch broke it"));
  EXPECT_THAT(again, HasSubstr("The reducer's report."));
}

TEST_F(TorchBisectTest, TwoPythonsOfOneReleaseKeepALogEach) {
  std::filesystem::create_directories(dir_.path() + "/copy");
  options_.pythons = {FakeTorch(dir_.path(), "2.13.0", kOld, 0), FakeTorch(dir_.path() + "/copy", "2.13.0", kOld, 1)};
  const TorchBisect b = BisectTorch(repro_, options_, [](const std::string&) {});
  ASSERT_EQ(b.runs.size(), 2u);
  EXPECT_NE(b.runs[0].log, b.runs[1].log);
  EXPECT_THAT(ReadTextFile(repro_ + "/torch_bisect/2.13.0.log"), HasSubstr("repro.py: exit 0"));
  EXPECT_THAT(ReadTextFile(repro_ + "/torch_bisect/2.13.0-2.log"), HasSubstr("repro.py: exit 1"));
}

TEST_F(TorchBisectTest, SaysWhenAKeyOfTheReproIsUnknownToATorch) {
  options_.pythons = {FakeTorch(dir_.path(), "2.12.1", kOld, 1), FakeTorch(dir_.path(), "2.13.0", json::object(), 2)};
  const TorchBisect b = BisectTorch(repro_, options_, [](const std::string&) {});
  EXPECT_THAT(b.runs[1].unknown_configs, ElementsAre("cpp.inject_relu_bug_TESTING_ONLY", "realize_opcount_threshold"));
  EXPECT_EQ(b.runs[1].verdict, TorchVerdict::kFailsDifferently);
  EXPECT_EQ(b.kind, "always");  // one judged torch, reproducing
  WriteTorchBisect(b, repro_);
  EXPECT_THAT(ReadTextFile(repro_ + "/report.md"), HasSubstr("has no inductor config cpp.inject_relu_bug_TESTING_ONLY"));
}

TorchRun MakeRun(const std::string& version, TorchVerdict v) {
  TorchRun r;
  r.torch.version = version;
  r.verdict = v;
  return r;
}

TEST(DecideBoundary, FixesAlwaysNeverAndAVerdictThatChangesTwice) {
  TorchBisect fix;
  fix.runs = {MakeRun("2.12.1", TorchVerdict::kReproduces), MakeRun("2.13.0", TorchVerdict::kCannotRun),
              MakeRun("2.14.1", TorchVerdict::kPasses)};
  DecideBoundary(&fix);
  EXPECT_EQ(fix.kind, "fix");
  EXPECT_THAT(fix.answer, HasSubstr("Fixed between torch 2.12.1 (the newest that fails) and 2.14.1"));
  EXPECT_EQ(TorchBisectJson(fix)["oldest_passing"], "2.14.1");
  EXPECT_TRUE(TorchBisectJson(fix)["newest_passing"].is_null());

  TorchBisect never;
  never.runs = {MakeRun("2.12.1", TorchVerdict::kPasses), MakeRun("2.13.0", TorchVerdict::kPasses)};
  DecideBoundary(&never);
  EXPECT_EQ(never.kind, "never");
  EXPECT_EQ(never.newest_passing, -1);

  TorchBisect none;
  none.runs = {MakeRun("2.12.1", TorchVerdict::kCannotRun), MakeRun("2.13.0", TorchVerdict::kFailsDifferently)};
  DecideBoundary(&none);
  EXPECT_EQ(none.kind, "unjudged");

  TorchBisect twice;
  twice.runs = {MakeRun("2.12.1", TorchVerdict::kReproduces), MakeRun("2.13.0", TorchVerdict::kPasses),
                MakeRun("2.14.1", TorchVerdict::kReproduces)};
  DecideBoundary(&twice);
  EXPECT_EQ(twice.kind, "regression");
  EXPECT_FALSE(twice.monotonic);
  EXPECT_THAT(twice.answer, HasSubstr("changes 2 times"));
  EXPECT_EQ(twice.runs[twice.oldest_failing].torch.version, "2.14.1");
}

TEST(CompareTorchVersions, OrdersReleasesNotStrings) {
  EXPECT_LT(CompareTorchVersions("2.9.1", "2.12.1"), 0);
  EXPECT_LT(CompareTorchVersions("2.12.1+cu130", "2.13.0+cpu"), 0);
  EXPECT_GT(CompareTorchVersions("2.15.0", "2.14.1+cu130"), 0);
  EXPECT_EQ(CompareTorchVersions("2.13.0", "2.13.0"), 0);
}

TEST_F(TorchBisectTest, RefusesADirectoryWithoutARepro) {
  options_.pythons = {"python3"};
  EXPECT_THROW(
      {
        try {
          BisectTorch(dir_.path(), options_, [](const std::string&) {});
        } catch (const HarnessError& e) {
          EXPECT_THAT(e.what(), HasSubstr("has no repro.py"));
          throw;
        }
      },
      HarnessError);
  options_.pythons.clear();
  EXPECT_THROW(BisectTorch(repro_, options_, [](const std::string&) {}), HarnessError);
}

}  // namespace
}  // namespace aoti

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--junit_xsd=", 0) == 0) aoti::g_junit_xsd = a.substr(12);
  }
  return RUN_ALL_TESTS();
}
