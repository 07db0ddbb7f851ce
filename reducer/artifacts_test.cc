// The artifacts when the disk fills (a file-size limit, RLIMIT_FSIZE): an earlier complete
// repro is never replaced by a partial one; when the full set does not fit, the essentials
// are written and the report says what was left out; when nothing fits, the earlier
// repro stays as it was and the error names the file.
#include "reducer/artifacts.h"

#include <signal.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/util/errors.h"
#include "harness/program/program.h"
#include "harness/archive/pt2_archive.h"

namespace aoti {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const char kPackage[] = "testdata/corpus/mlp.pt2";

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A result as the reducer would give it; `nodes_after` tells two results apart.
ReduceResult Result(size_t nodes_after, const std::string& checkpoint) {
  ReduceResult r;
  auto archive = Pt2Archive::Open(kPackage);
  r.original = r.minimal = Program::Parse(archive->ProgramJson("model"), kPackage);
  r.failure_class = "accuracy";
  r.message = "output 0 differs";
  r.final_archive = kPackage;
  r.inductor_configs_json = "{}";
  r.nodes_before = 40;
  r.nodes_after = nodes_after;
  r.checkpoints = {{nodes_after + 1, checkpoint}};
  return r;
}

// RLIMIT_FSIZE for this process while in scope; writes past it fail with EFBIG.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit l = saved_;
    l.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &l);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    ::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit saved_{};
  sighandler_t old_handler_;
};

class ArtifactsOnAFullDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(std::getenv("TEST_TMPDIR")) / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(root_);
    fs::create_directories(root_);
    out_ = (root_ / "repro").string();
    big_checkpoint_ = (root_ / "big_checkpoint.pt2").string();
    std::ofstream(big_checkpoint_, std::ios::binary) << std::string(2 << 20, 'x');  // 2 MiB
    spec_.package = kPackage;
  }

  // The files of the set, and that no half-written file or staging directory is left.
  void ExpectNoLeftovers() {
    for (const auto& e : fs::recursive_directory_iterator(root_)) {
      EXPECT_EQ(e.path().string().find(".partial"), std::string::npos) << e.path();
    }
  }

  fs::path root_;
  std::string out_, big_checkpoint_;
  ReduceSpec spec_;
  ReduceOptions options_;
};

TEST_F(ArtifactsOnAFullDisk, TheFullSetWhenItFits) {
  WriteArtifacts(Result(3, big_checkpoint_), spec_, options_, out_);
  for (const char* f : {"repro.pt2", "repro.py", "report.md", "summary.json", "case.json", "original.pt2",
                        "BUILD.bazel", "repro_test.cc", "graph.dot", "checkpoints/4.pt2"}) {
    EXPECT_TRUE(fs::exists(fs::path(out_) / f)) << f;
  }
  EXPECT_THAT(Read(fs::path(out_) / "summary.json"), HasSubstr("\"not_written\": []"));
  ExpectNoLeftovers();
}

// The pytree modules the test declared travel with its repro: check_options.json (read by
// repro.py and repro_test) and the repro's aoti_package, which reads repro.pt2's program.
TEST_F(ArtifactsOnAFullDisk, TheDeclaredPytreeModulesTravelWithTheRepro) {
  spec_.check.runner.pytree_modules = {"transformers.modeling_outputs"};
  WriteArtifacts(Result(3, big_checkpoint_), spec_, options_, out_);
  EXPECT_THAT(Read(fs::path(out_) / "BUILD.bazel"), HasSubstr("pytree_modules = [\"transformers.modeling_outputs\"]"));
  EXPECT_THAT(Read(fs::path(out_) / "check_options.json"), HasSubstr("transformers.modeling_outputs"));
  EXPECT_THAT(Read(fs::path(out_) / "repro.py"), HasSubstr("transformers.modeling_outputs"));
}

TEST_F(ArtifactsOnAFullDisk, EssentialsOnlyWhenTheCheckpointsDoNotFit) {
  WriteArtifacts(Result(3, big_checkpoint_), spec_, options_, out_);
  {
    FileSizeLimit limit(1 << 20);  // 1 MiB: the 2 MiB checkpoint cannot be copied
    WriteArtifacts(Result(2, big_checkpoint_), spec_, options_, out_);
  }
  // The new result, whole, without checkpoints; nothing of the earlier one mixed in.
  EXPECT_THAT(Read(fs::path(out_) / "summary.json"), HasSubstr("\"nodes_after\": 2"));
  EXPECT_THAT(Read(fs::path(out_) / "repro.py"), HasSubstr("to 2 nodes"));
  EXPECT_FALSE(fs::exists(fs::path(out_) / "checkpoints/4.pt2")) << "a checkpoint of the earlier result survived";
  EXPECT_FALSE(fs::exists(fs::path(out_) / "checkpoints/3.pt2"));
  const std::string report = Read(fs::path(out_) / "report.md");
  EXPECT_THAT(report, HasSubstr("## Not written"));
  EXPECT_THAT(report, HasSubstr("checkpoints/3.pt2"));
  EXPECT_THAT(report, HasSubstr("File too large"));
  ExpectNoLeftovers();
}

TEST_F(ArtifactsOnAFullDisk, TheEarlierReproStaysWhenNothingFits) {
  WriteArtifacts(Result(3, big_checkpoint_), spec_, options_, out_);
  const std::string before = Read(fs::path(out_) / "summary.json");
  try {
    FileSizeLimit limit(16 << 10);  // 16 KiB: not even repro.pt2 (48 KiB)
    WriteArtifacts(Result(2, big_checkpoint_), spec_, options_, out_);
    ADD_FAILURE() << "no error";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), HasSubstr("could not be written"));
    EXPECT_THAT(e.what(), HasSubstr("File too large"));
    EXPECT_THAT(e.what(), HasSubstr("the earlier repro there is left as it was"));
  }
  EXPECT_EQ(Read(fs::path(out_) / "summary.json"), before);
  EXPECT_TRUE(fs::exists(fs::path(out_) / "checkpoints/4.pt2"));
  ExpectNoLeftovers();
}

}  // namespace
}  // namespace aoti
