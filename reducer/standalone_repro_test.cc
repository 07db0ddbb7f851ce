// WriteStandaloneRepro against a stand-in for standalone.py (a Python script whose
// behaviour the repro directory's `mode` file picks): what the child's record says reaches
// summary.json (its other keys kept), report.md (one section, replaced on a second run) and
// the one-line text; a child that cannot write the program, runs past its time, leaves no
// record, or is never started (no script, no time left) is said so, never a crash. The
// real standalone.py is run on real reductions by the example (tools/run_example.sh) and the
// real-model corpus (tools/real_models.sh); reducer/repro/standalone_test.py tests it alone.
#include "reducer/standalone_repro.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/archive/tensor_bundle.h"
#include "harness/util/temp_dir.h"

DEFINE_string(python, "", "a Python 3 interpreter");

namespace aoti {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kStandIn[] = R"PY(
import json, os, sys, time
repro = sys.argv[1]
mode = open(os.path.join(repro, "mode")).read().strip()
with open(os.path.join(repro, "argv"), "w") as f:
    f.write(" ".join(sys.argv[2:]))
verify = "--verify" in sys.argv
if mode == "hang":
    time.sleep(60)
if mode == "cannot":
    print("standalone.py: x says why it cannot be written as source: an effect token (with_effects)")
    sys.exit(3)
if mode == "crash":
    print("Traceback: something broke", file=sys.stderr)
    sys.exit(1)
with open(os.path.join(repro, "repro_standalone.py"), "w") as f:
    f.write("import torch\n" * 7)
with open(os.path.join(repro, "upstream_issue.md"), "w") as f:
    f.write("# [AOTI] relu\n")
if verify and mode != "norecord":
    json.dump({"file": "repro_standalone.py", "runs": 1, "seconds": 12.25, "written": True, "why_not": "",
               "values": "seeded", "exit_code": 1 if mode == "reproduces" else 0, "reproduces": mode == "reproduces",
               "verdict": "accuracy" if mode == "reproduces" else "passes", "lines": 7},
              open(os.path.join(repro, "repro_standalone.json"), "w"))
print("standalone.py: done")
)PY";

class StandaloneReproTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(FLAGS_python.empty()) << "--python is required";
    script_ = dir_.path() + "/standalone.py";
    WriteTextFile(script_, kStandIn);
    repro_ = dir_.path() + "/repro";
    fs::create_directories(repro_);
    WriteTextFile(repro_ + "/summary.json", R"({"reduced": true, "nodes_after": 1})");
    WriteTextFile(repro_ + "/report.md", "# Repro\n\nreduced.\n\n## Environment\n\ntorch\n");
  }
  StandaloneRecord Run(const std::string& mode, StandaloneOptions o = {}) {
    WriteTextFile(repro_ + "/mode", mode);
    o.python = FLAGS_python;
    if (o.script.empty()) o.script = script_;
    return WriteStandaloneRepro(repro_, o);
  }
  nlohmann::json Summary() { return nlohmann::json::parse(ReadTextFile(repro_ + "/summary.json")); }
  std::string Report() { return ReadTextFile(repro_ + "/report.md"); }

  TempDir dir_{"standalone_repro_test"};
  std::string script_, repro_;
};

TEST_F(StandaloneReproTest, ReproducesRecordedInSummaryAndReport) {
  const StandaloneRecord r = Run("reproduces");
  EXPECT_TRUE(r.written);
  EXPECT_TRUE(r.ran);
  EXPECT_TRUE(r.reproduces);
  EXPECT_TRUE(r.issue_written);
  EXPECT_EQ(r.lines, 7);
  EXPECT_EQ(r.verdict, "accuracy");
  EXPECT_EQ(r.values, "seeded");
  EXPECT_EQ(StandaloneText(r), "reproduces with only torch (7 lines, 12.2 s)");
  EXPECT_THAT(ReadTextFile(repro_ + "/argv"), HasSubstr("--issue --verify --timeout"));
  const auto s = Summary();
  EXPECT_EQ(s["nodes_after"], 1) << "the summary's other keys are kept";
  EXPECT_EQ(s["standalone"]["reproduces"], true);
  EXPECT_EQ(s["standalone"]["file"], "repro_standalone.py");
  EXPECT_EQ(s["standalone"]["lines"], 7);
  const std::string report = Report();
  EXPECT_THAT(report, HasSubstr("## Environment\n\ntorch\n\n## The torch-only repro (repro_standalone.py)"));
  EXPECT_THAT(report, HasSubstr("it **reproduced** (accuracy) in 12.2 s"));
  EXPECT_THAT(report, HasSubstr("`upstream_issue.md`"));
}

TEST_F(StandaloneReproTest, ASecondRunReplacesItsSection) {
  Run("reproduces");
  const StandaloneRecord r = Run("passes");
  EXPECT_TRUE(r.written);
  EXPECT_FALSE(r.reproduces);
  EXPECT_EQ(StandaloneText(r), "does not reproduce alone (passes; 7 lines)");
  const std::string report = Report();
  EXPECT_EQ(report.find("## The torch-only repro"), report.rfind("## The torch-only repro")) << report;
  EXPECT_THAT(report, HasSubstr("**did not reproduce** (passes)"));
  EXPECT_THAT(report, Not(HasSubstr("**reproduced**")));
  EXPECT_THAT(report, HasSubstr("## Environment")) << "the sections before it are kept";
  EXPECT_EQ(Summary()["standalone"]["reproduces"], false);
}

TEST_F(StandaloneReproTest, WrittenOnlyWhenNotAskedToRun) {
  StandaloneOptions o;
  o.verify = false;
  const StandaloneRecord r = Run("reproduces", o);
  EXPECT_TRUE(r.written);
  EXPECT_FALSE(r.ran);
  EXPECT_EQ(r.lines, 7);
  EXPECT_THAT(ReadTextFile(repro_ + "/argv"), Not(HasSubstr("--verify")));
  EXPECT_THAT(StandaloneText(r), HasSubstr("written (7 lines), not run alone: not asked to"));
  EXPECT_THAT(Report(), HasSubstr("Not run alone: not asked to"));
}

TEST_F(StandaloneReproTest, WrittenOnlyWhenTooLittleTimeIsLeftToRunIt) {
  StandaloneOptions o;
  o.deadline = Deadline(Deadline::Clock::now() + std::chrono::seconds(60), "a test deadline");
  const StandaloneRecord r = Run("reproduces", o);  // 60 s left, under min_verify_s
  EXPECT_TRUE(r.written);
  EXPECT_FALSE(r.ran);
  EXPECT_THAT(ReadTextFile(repro_ + "/argv"), Not(HasSubstr("--verify")));
  EXPECT_THAT(r.problem, HasSubstr("too short to run it"));
}

TEST_F(StandaloneReproTest, NothingStartedWhenTheTimeHasRunOut) {
  StandaloneOptions o;
  o.deadline = Deadline(Deadline::Clock::now() + std::chrono::seconds(5), "a test deadline");
  const StandaloneRecord r = Run("reproduces", o);
  EXPECT_FALSE(r.written);
  EXPECT_FALSE(fs::exists(repro_ + "/argv")) << "the child was started";
  EXPECT_THAT(StandaloneText(r), HasSubstr("not written: the test's time ran out"));
  EXPECT_EQ(Summary()["standalone"]["written"], false);
}

TEST_F(StandaloneReproTest, NoScriptIsSaidByItsFlag) {
  StandaloneOptions o;
  o.script = "";
  WriteTextFile(repro_ + "/mode", "reproduces");
  o.python = FLAGS_python;
  const StandaloneRecord r = WriteStandaloneRepro(repro_, o);
  EXPECT_FALSE(r.written);
  EXPECT_THAT(r.problem, HasSubstr("--aoti_standalone_script"));
  EXPECT_THAT(Report(), HasSubstr("Not written as source: no standalone.py"));
}

TEST_F(StandaloneReproTest, AProgramThatCannotBeWrittenSaysWhy) {
  StandaloneOptions o;
  o.verify = false;
  const StandaloneRecord r = Run("cannot", o);
  EXPECT_FALSE(r.written);
  EXPECT_EQ(r.why_not, "an effect token (with_effects)");
  EXPECT_EQ(StandaloneText(r), "not written: an effect token (with_effects)");
  EXPECT_EQ(Summary()["standalone"]["why_not"], "an effect token (with_effects)");
}

TEST_F(StandaloneReproTest, AChildThatFailsOrLeavesNoRecordIsSaidSo) {
  StandaloneRecord r = Run("crash");
  EXPECT_FALSE(r.written);
  EXPECT_THAT(r.problem, HasSubstr("left no record"));
  r = Run("norecord");
  EXPECT_FALSE(r.ran);
  EXPECT_FALSE(r.reproduces);
  EXPECT_THAT(StandaloneText(r), HasSubstr("left no record"));
}

TEST_F(StandaloneReproTest, TheRunsInductorCacheIsKeptMadeAndEmptiedPastItsCap) {
  StandaloneOptions o;
  o.inductor_cache_dir = dir_.path() + "/cache/standalone_inductor";
  o.inductor_cache_max_bytes = 1000;
  Run("reproduces", o);
  EXPECT_THAT(ReadTextFile(repro_ + "/argv"), HasSubstr("--inductor-cache " + o.inductor_cache_dir));
  ASSERT_TRUE(fs::is_directory(o.inductor_cache_dir)) << "made when missing";
  WriteTextFile(o.inductor_cache_dir + "/kept", "x");
  Run("reproduces", o);
  EXPECT_TRUE(fs::exists(o.inductor_cache_dir + "/kept")) << "a cache under its cap is kept";
  fs::create_directories(o.inductor_cache_dir + "/a/b");
  WriteTextFile(o.inductor_cache_dir + "/a/b/big", std::string(2000, 'x'));
  Run("reproduces", o);
  EXPECT_FALSE(fs::exists(o.inductor_cache_dir + "/kept")) << "a cache past its cap is emptied";
  EXPECT_TRUE(fs::is_directory(o.inductor_cache_dir));
  o.verify = false;
  Run("reproduces", o);
  EXPECT_THAT(ReadTextFile(repro_ + "/argv"), Not(HasSubstr("--inductor-cache"))) << "nothing runs, no cache";
  // A path that cannot be a directory: the run gets a new cache of its own, and still runs.
  WriteTextFile(dir_.path() + "/file", "x");
  o.verify = true;
  o.inductor_cache_dir = dir_.path() + "/file/sub";
  const StandaloneRecord r = Run("reproduces", o);
  EXPECT_THAT(ReadTextFile(repro_ + "/argv"), Not(HasSubstr("--inductor-cache")));
  EXPECT_TRUE(r.reproduces);
}

TEST_F(StandaloneReproTest, AChildPastItsTimeIsStopped) {
  StandaloneOptions o;
  o.max_seconds = 3;
  o.min_write_s = 1;
  o.min_verify_s = 1;
  const auto start = std::chrono::steady_clock::now();
  const StandaloneRecord r = Run("hang", o);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_FALSE(r.reproduces);
  EXPECT_THAT(r.problem, HasSubstr("ran past"));
  EXPECT_THAT(Summary()["standalone"]["problem"].get<std::string>(), HasSubstr("ran past"));
}

TEST(StandaloneRecordTest, AnUnreadableRecordIsAProblemNotACrash) {
  TempDir dir("standalone_record_test");
  WriteTextFile(dir.path() + "/r.json", "{\"runs\": 1e300}");
  EXPECT_THAT(ReadStandaloneRecord(dir.path() + "/r.json").problem, HasSubstr("not readable"));
  WriteTextFile(dir.path() + "/r.json", "[1]");
  EXPECT_THAT(ReadStandaloneRecord(dir.path() + "/r.json").problem, HasSubstr("not readable"));
  EXPECT_THAT(ReadStandaloneRecord(dir.path() + "/none.json").problem, HasSubstr("left no record"));
}

}  // namespace
}  // namespace aoti
