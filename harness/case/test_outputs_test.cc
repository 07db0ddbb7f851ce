// Bazel's undeclared test outputs work for harness tests: a file written to
// TEST_UNDECLARED_OUTPUTS_DIR is there (and Bazel zips it into test.outputs/outputs.zip,
// where CI picks up repro artifacts).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "harness/case/failing_case.h"
#include "harness/util/errors.h"
#include "harness/util/temp_dir.h"
#include "harness/archive/tensor_bundle.h"

namespace {

TEST(UndeclaredOutputs, FileWrittenThereIsKept) {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  if (dir == nullptr) GTEST_SKIP() << "not run by bazel test (TEST_UNDECLARED_OUTPUTS_DIR unset)";
  const std::string path = std::string(dir) + "/aoti_probe.txt";
  {
    std::ofstream out(path);
    ASSERT_TRUE(out) << "cannot write " << path;
    out << "aoti_harness undeclared output\n";
  }
  std::ifstream in(path);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(text, "aoti_harness undeclared output\n");
  RecordProperty("aoti_artifact", "aoti_probe.txt");
}

TEST(UndeclaredOutputs, PathsInsideAreNamedRelativeToTheTestsOutputs) {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  if (dir == nullptr) GTEST_SKIP() << "not run by bazel test (TEST_UNDECLARED_OUTPUTS_DIR unset)";
  EXPECT_EQ(aoti::InTestOutputs(std::string(dir) + "/aoti/Suite.Test/repro"), "aoti/Suite.Test/repro");
  EXPECT_EQ(aoti::InTestOutputs("/elsewhere/repro"), "/elsewhere/repro");
  EXPECT_EQ(aoti::InTestOutputs(std::string(dir) + "x/repro"), std::string(dir) + "x/repro")
      << "a sibling directory whose name starts the same is not inside";
}

// Where Bazel keeps this test's logs: bazel-testlogs/harness/case/test_outputs_test, under
// external/aoti_harness/ where the suite runs it as @aoti_harness (suite/WORKSPACE).
std::string OwnTestlogs() {
  const char* t = std::getenv("TEST_TARGET");
  const std::string target = t ? t : "";
  const std::string repo = target.rfind('@', 0) == 0 ? "external/" + target.substr(1, target.find("//") - 1) + "/" : "";
  return "bazel-testlogs/" + repo + "harness/case/test_outputs_test";
}

TEST(UndeclaredOutputs, MessagesNameTheOutputsUnderBazelTestlogsAndACommandForAfterTheTest) {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  if (dir == nullptr) GTEST_SKIP() << "not run by bazel test (TEST_UNDECLARED_OUTPUTS_DIR unset)";
  // This test's own label: //harness/case:test_outputs_test.
  EXPECT_EQ(aoti::TestOutputsDir(), OwnTestlogs() + "/test.outputs");
  EXPECT_EQ(aoti::ForUser(std::string(dir) + "/aoti/Suite.Test/repro"), OwnTestlogs() + "/test.outputs/aoti/Suite.Test/repro");
  EXPECT_EQ(aoti::ForUser("/elsewhere/repro"), "/elsewhere/repro");
  const std::string command = aoti::ReduceCaseCommand(std::string(dir) + "/aoti/Suite.Test");
  EXPECT_EQ(command,
            "bazel run @aoti_harness//plugin:aoti_reduce -- minify --case_dir=" + OwnTestlogs() +
                "/test.outputs/aoti/Suite.Test");
  EXPECT_EQ(command.find(dir), std::string::npos) << "no sandbox path in a command for after the test";
  EXPECT_EQ(aoti::ReduceCaseCommand("/cases/Suite.Test"), "aoti_reduce minify --case_dir=/cases/Suite.Test");
}

TEST(UndeclaredOutputs, AShardsOutputsAreItsOwn) {
  if (std::getenv("TEST_TARGET") == nullptr) GTEST_SKIP() << "not run by bazel test (TEST_TARGET unset)";
  ::setenv("TEST_TOTAL_SHARDS", "3", 1);
  ::setenv("TEST_SHARD_INDEX", "1", 1);
  EXPECT_EQ(aoti::TestOutputsDir(), OwnTestlogs() + "/shard_2_of_3/test.outputs");
  ::unsetenv("TEST_TOTAL_SHARDS");
  ::unsetenv("TEST_SHARD_INDEX");
}

// A case as Bazel leaves it, in both layouts: the directory test.outputs/aoti/<test>
// (Bazel 8, --nozip_undeclared_test_outputs) or the entry aoti/<test>/ of
// test.outputs/outputs.zip (earlier Bazels). The path the messages name opens either way.
TEST(OpenCaseDir, ReadsACaseFromEitherLayout) {
  const std::string root = aoti::TempDir("layouts").Release();
  for (const std::string layout : {"unzipped", "zipped"}) {
    const std::string outputs = root + "/" + layout + "/bazel-testlogs/pkg/model_test/test.outputs";
    const std::string staged = layout == "zipped" ? root + "/staging" : outputs;
    aoti::MakeDirs(staged + "/aoti/Suite.Test/inputs");
    std::ofstream(staged + "/aoti/Suite.Test/case.json") << "{}";
    if (layout == "zipped") {
      aoti::MakeDirs(outputs);
      ASSERT_EQ(std::system(("cd " + staged + " && zip -qr " + outputs + "/outputs.zip aoti").c_str()), 0);
    }
    std::string opened_path;
    {
      const aoti::OpenedCaseDir opened_dir = aoti::OpenCaseDir(outputs + "/aoti/Suite.Test");
      const std::string& opened = opened_dir.path();
      opened_path = opened;
      EXPECT_TRUE(std::filesystem::is_regular_file(opened + "/case.json")) << layout << ": " << opened;
      EXPECT_TRUE(std::filesystem::is_directory(opened + "/inputs")) << layout;
      EXPECT_EQ(opened_dir.unzipped(), layout == "zipped");
      if (layout == "zipped") {
        EXPECT_EQ(opened.find(outputs), std::string::npos) << "unzipped elsewhere";
      }
    }
    // An unzipped case is removed when its reader is done with it; a directory never.
    EXPECT_EQ(std::filesystem::exists(opened_path), layout == "unzipped") << opened_path;
    // Relative to where `bazel run` was started.
    ::setenv("BUILD_WORKING_DIRECTORY", (root + "/" + layout).c_str(), 1);
    EXPECT_TRUE(std::filesystem::is_regular_file(
        aoti::OpenCaseDir("bazel-testlogs/pkg/model_test/test.outputs/aoti/Suite.Test").path() + "/case.json"))
        << layout;
    ::unsetenv("BUILD_WORKING_DIRECTORY");
  }
  try {
    aoti::OpenCaseDir(root + "/zipped/bazel-testlogs/pkg/model_test/test.outputs/aoti/Other.Test");
    ADD_FAILURE() << "a case the zip does not hold opened";
  } catch (const aoti::HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("holds no aoti/Other.Test/"), std::string::npos) << e.what();
  }
  try {
    aoti::OpenCaseDir(root + "/nowhere");
    ADD_FAILURE() << "a missing directory opened";
  } catch (const aoti::HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("--case_dir=" + root + "/nowhere: no such directory"), std::string::npos)
        << e.what();
  }
  aoti::RemoveTree(root);
}

// InChildUnderAddressCap: runs `copy` in a child process whose address space may grow by
// `headroom` bytes at most; true when it succeeded there.
bool InChildUnderAddressCap(size_t headroom, const std::function<void()>& copy) {
  const pid_t pid = fork();
  if (pid == 0) {
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const rlim_t cap = static_cast<rlim_t>(pages) * sysconf(_SC_PAGESIZE) + headroom;
    const rlimit limit{cap, cap};
    setrlimit(RLIMIT_AS, &limit);
    try {
      copy();
    } catch (...) {
      _exit(1);
    }
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A case's copy of its .pt2 (and the repro's copies) stream the file: a package larger
// than the memory left is copied, where reading it whole fails.
TEST(CaseFiles, APackageIsCopiedWithoutHoldingItInMemory) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") / "copy_test";
  fs::create_directories(dir);
  const fs::path big = dir / "big.pt2";
  {
    std::ofstream(big, std::ios::binary).put('P');
  }
  fs::resize_file(big, 192u << 20);  // sparse: 192 MiB of zeros on no disk
  const size_t headroom = 64u << 20;
  // The cap bites: holding the file whole does not fit under it.
  EXPECT_FALSE(InChildUnderAddressCap(headroom, [&] {
    aoti::WriteTextFile((dir / "whole.pt2").string(), aoti::ReadTextFile(big.string()));
  }));
  EXPECT_TRUE(InChildUnderAddressCap(headroom, [&] { aoti::CopyFileAtomically(big.string(), (dir / "copy.pt2").string()); }));
  EXPECT_EQ(fs::file_size(dir / "copy.pt2"), fs::file_size(big));
  EXPECT_FALSE(fs::exists(dir / "copy.pt2.partial"));
  fs::remove_all(dir);
}

// A copy that cannot be made names both paths and leaves nothing behind.
TEST(CaseFiles, ACopyThatFailsNamesBothPathsAndLeavesNoPartialFile) {
  try {
    aoti::CopyFileAtomically("/no/such/package.pt2", "/tmp/never_written.pt2");
    FAIL() << "expected a HarnessError";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/no/such/package.pt2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/tmp/never_written.pt2"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists("/tmp/never_written.pt2.partial"));
}

// A text file written atomically replaces the old one whole; one that cannot be moved into
// place names both paths and leaves no .partial behind.
TEST(CaseFiles, AnAtomicWriteReplacesTheFileWholeOrSaysWhyNot) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") / "atomic_write";
  fs::create_directories(dir);
  const std::string path = (dir / "case.json").string();
  aoti::WriteTextFileAtomically(path, "{\"old\": 1}");
  aoti::WriteTextFileAtomically(path, "{\"new\": 2}");
  EXPECT_EQ(aoti::ReadTextFile(path), "{\"new\": 2}");
  EXPECT_FALSE(fs::exists(path + ".partial"));
  fs::create_directories(dir / "a_directory" / "not_empty");  // rename onto it fails
  try {
    aoti::WriteTextFileAtomically((dir / "a_directory").string(), "text");
    FAIL() << "expected a HarnessError";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("a_directory.partial to "), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "a_directory.partial"));
  fs::remove_all(dir);
}

}  // namespace
