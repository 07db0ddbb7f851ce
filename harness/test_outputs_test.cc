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

}  // namespace
