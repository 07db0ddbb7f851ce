#include "harness/util/digest.h"

#include <gtest/gtest.h>

#include <string>

namespace aoti {
namespace {

// FIPS 180-2's test vectors.
TEST(Sha256Hex, MatchesTheStandardsVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Hex, ReadsEveryByteIncludingZeros) {
  const std::string a("a\0b", 3), b("a\0c", 3);
  EXPECT_NE(Sha256Hex(a), Sha256Hex(b));
  EXPECT_EQ(Sha256Hex(a).size(), 64u);
}

}  // namespace
}  // namespace aoti
