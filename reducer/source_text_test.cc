// Hostile text from a package (a carriage return, quotes, control characters, UTF-8, bytes
// that are not UTF-8, Unicode line separators) written into generated source reads back as
// the same bytes, and cannot end a comment: checked by Python itself, which reads the
// Python literals and, byte for byte, the C and Starlark octal escapes.
#include "reducer/source_text.h"

#include <sys/wait.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/util/subprocess.h"
#include "harness/util/temp_dir.h"

DEFINE_string(python, "", "a Python 3 interpreter");

namespace aoti {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::vector<std::string>& Hostile() {
  static const std::vector<std::string> texts = {
      "relu",
      "relu\rraise SystemExit(3)",
      "a\nraise SystemExit(4)",
      "quote \" backslash \\ single ' end\\",
      std::string("nul \0 byte", 10),
      "\x01\x1b[31m\x7f",
      "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80",
      "bad \xff\xfe \xc3 end",
      "line\xe2\x80\xa8sep \xc2\x85 nel",
      "tab\there ??= trigraph",
  };
  return texts;
}

std::string Hex(const std::string& s) {
  std::string out;
  char buf[4];
  for (unsigned char c : s) {
    std::snprintf(buf, sizeof(buf), "%02x", c);
    out += buf;
  }
  return out;
}

TEST(StringLiteral, PrintableAsciiOnlyAndQuoted) {
  for (const auto lang : {SourceLanguage::kPython, SourceLanguage::kCpp, SourceLanguage::kStarlark}) {
    for (const auto& t : Hostile()) {
      const std::string lit = StringLiteral(t, lang);
      ASSERT_GE(lit.size(), 2u);
      EXPECT_EQ(lit.front(), '"');
      EXPECT_EQ(lit.back(), '"');
      for (unsigned char c : lit) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << Hex(lit);
    }
  }
  EXPECT_EQ(StringLiteral("relu", SourceLanguage::kPython), "\"relu\"");
  EXPECT_EQ(StringLiteral("a\"b\\", SourceLanguage::kCpp), "\"a\\\"b\\\\\"");
  // An octal escape is always three digits: a digit after it is not read into it.
  EXPECT_EQ(StringLiteral(std::string("\x01") + "7", SourceLanguage::kCpp), "\"\\0017\"");
}

TEST(CommentLine, NoLineBreakSurvives) {
  for (const auto& t : Hostile()) {
    const std::string c = CommentLine(t);
    EXPECT_EQ(c.find('\n'), std::string::npos);
    EXPECT_EQ(c.find('\r'), std::string::npos);
    EXPECT_THAT(c, Not(HasSubstr("\xe2\x80\xa8")));
    EXPECT_THAT(c, Not(HasSubstr("\xc2\x85")));
  }
  EXPECT_EQ(CommentLine("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(CommentLine("a\rb"), "a\\x0db");
  EXPECT_EQ(CommentLine("\xff"), "\\xff");
  EXPECT_EQ(CommentBlock("one\ntwo\r", "# "), "# one\n# two\\x0d\n");
}

// Python reads each Python literal back as the same bytes (os.fsencode), each C++ and
// Starlark literal back as the same bytes (latin-1: one code point per octal byte), and
// runs none of the comments.
TEST(Python, ReadsEveryLiteralBackAndNoComment) {
  ASSERT_FALSE(FLAGS_python.empty()) << "--python is required";
  TempDir dir("source_text_test");
  std::ostringstream py;
  py << "# -*- coding: utf-8 -*-\nimport os, sys\n";
  for (const auto& t : Hostile()) py << "# " << CommentLine(t) << "\n";
  py << "PY = [\n";
  for (const auto& t : Hostile()) py << "    " << StringLiteral(t, SourceLanguage::kPython) << ",\n";
  py << "]\nC = [\n";
  for (const auto& t : Hostile()) py << "    " << StringLiteral(t, SourceLanguage::kCpp) << ",\n";
  py << "]\nSTARLARK = [\n";
  for (const auto& t : Hostile()) py << "    " << StringLiteral(t, SourceLanguage::kStarlark) << ",\n";
  py << "]\n"
     << "for s in PY:\n    print('py', os.fsencode(s).hex())\n"
     << "for s in C:\n    print('c', s.encode('latin-1').hex())\n"
     << "for s in STARLARK:\n    print('starlark', s.encode('latin-1').hex())\n";
  const std::string script = dir.path() + "/literals.py", log = dir.path() + "/out.txt";
  std::ofstream(script) << py.str();
  int status = 0;
  ASSERT_TRUE(RunLogged({FLAGS_python, script}, ChildEnvironment({}), log, 60, &status));
  std::ifstream in(log);
  const std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "python: " << out;
  for (const auto& t : Hostile()) {
    for (const char* lang : {"py", "c", "starlark"}) {
      EXPECT_THAT(out, HasSubstr(std::string(lang) + " " + Hex(t) + "\n")) << lang << " " << Hex(t);
    }
  }
}

}  // namespace
}  // namespace aoti
