#include "harness/util/strings.h"

#include <unistd.h>

#include <gtest/gtest.h>

namespace aoti {
namespace {

TEST(Strings, PrefixSuffixAndContains) {
  EXPECT_TRUE(StartsWith("aten.relu.default", "aten."));
  EXPECT_FALSE(StartsWith("at", "aten."));
  EXPECT_TRUE(EndsWith("model.pt2", ".pt2"));
  EXPECT_FALSE(EndsWith("pt2", ".pt2"));
  EXPECT_TRUE(StartsWith("x", ""));
  EXPECT_TRUE(Contains("illegal memory access", "memory"));
  EXPECT_FALSE(Contains("", "x"));
}

TEST(Strings, JoinIntsAsMessagesWriteSizes) {
  EXPECT_EQ(JoinInts({}), "");
  EXPECT_EQ(JoinInts({2, 64}), "2, 64");
}

TEST(Strings, AbsolutePathResolvesWhatExistsAndKeepsWhatDoesNot) {
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  EXPECT_EQ(AbsolutePath("."), AbsolutePath(cwd));
  EXPECT_EQ(AbsolutePath("no/such/file.pt2"), "no/such/file.pt2");
}

}  // namespace
}  // namespace aoti
