// Bazel's undeclared test outputs work for harness tests: a file written to
// TEST_UNDECLARED_OUTPUTS_DIR is there (and Bazel zips it into test.outputs/outputs.zip,
// where CI picks up repro artifacts).
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "harness/failing_case.h"

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

TEST(UndeclaredOutputs, PathsInsideAreNamedAsInOutputsZip) {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  if (dir == nullptr) GTEST_SKIP() << "not run by bazel test (TEST_UNDECLARED_OUTPUTS_DIR unset)";
  EXPECT_EQ(aoti::InOutputsZip(std::string(dir) + "/aoti/Suite.Test/repro"), "outputs.zip:aoti/Suite.Test/repro");
  EXPECT_EQ(aoti::InOutputsZip("/elsewhere/repro"), "/elsewhere/repro");
  EXPECT_EQ(aoti::InOutputsZip(std::string(dir) + "x/repro"), std::string(dir) + "x/repro")
      << "a sibling directory whose name starts the same is not inside";
}

TEST(UndeclaredOutputs, MessagesNameTheZipUnderBazelTestlogsAndACommandForAfterTheTest) {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  if (dir == nullptr) GTEST_SKIP() << "not run by bazel test (TEST_UNDECLARED_OUTPUTS_DIR unset)";
  // This test's own label: //harness:test_outputs_test.
  EXPECT_EQ(aoti::TestOutputsZip(), "bazel-testlogs/harness/test_outputs_test/test.outputs/outputs.zip");
  EXPECT_EQ(aoti::ForUser(std::string(dir) + "/aoti/Suite.Test/repro"),
            "outputs.zip:aoti/Suite.Test/repro (in bazel-testlogs/harness/test_outputs_test/test.outputs/outputs.zip)");
  EXPECT_EQ(aoti::ForUser("/elsewhere/repro"), "/elsewhere/repro");
  const std::string command = aoti::ReduceCaseCommand(std::string(dir) + "/aoti/Suite.Test");
  EXPECT_EQ(command,
            "unzip -o bazel-testlogs/harness/test_outputs_test/test.outputs/outputs.zip 'aoti/Suite.Test/*' -d "
            "/tmp/aoti_case && bazel run @aoti_harness//reducer:aoti_reduce -- minify "
            "--case_dir=/tmp/aoti_case/aoti/Suite.Test");
  EXPECT_EQ(command.find(dir), std::string::npos) << "no sandbox path in a command for after the test";
  EXPECT_EQ(aoti::ReduceCaseCommand("/cases/Suite.Test"), "aoti_reduce minify --case_dir=/cases/Suite.Test");
}

}  // namespace
