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

TEST(Strings, MarkupEscapeLeavesNothingXmlCannotHold) {
  EXPECT_EQ(MarkupEscape("a<b & 'c' > \"d\""), "a&lt;b &amp; &#39;c&#39; &gt; &quot;d&quot;");
  EXPECT_EQ(MarkupEscape("line 1\nline 2\tx\x01\x1b[0m"), "line 1\nline 2\tx  [0m");
  EXPECT_EQ(MarkupEscape("line 1\nline 2", /*escape_newlines=*/true), "line 1&#10;line 2");
  EXPECT_EQ(MarkupEscape("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 passes through
}

TEST(Strings, AbsolutePathResolvesWhatExistsAndKeepsWhatDoesNot) {
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  EXPECT_EQ(AbsolutePath("."), AbsolutePath(cwd));
  EXPECT_EQ(AbsolutePath("no/such/file.pt2"), "no/such/file.pt2");
}

}  // namespace
}  // namespace aoti
