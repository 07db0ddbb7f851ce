// Each planted Triton bug in the CUDA MLP is caught with its failure class: the packages
// are keyed by the bug (BUILD.bazel), the class is the bug's name with a space. An
// accuracy failure says its float64 reference ran on the GPU. Runs on a GPU host only
// (requires-gpu).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugin/check_flags.h"
#include "harness/check/check.h"
#include "matchers/aoti_matches_eager.h"

namespace aoti {
namespace {

using ::testing::HasSubstr;

TEST(GpuPlanted, EachTritonBugIsCaughtWithItsClass) {
  ASSERT_EQ(PackageKeys().size(), 3u);
  for (const std::string& bug : PackageKeys()) {
    SCOPED_TRACE(bug);
    std::string expected = bug;
    if (expected.find('_') != std::string::npos) expected[expected.find('_')] = ' ';
    const CheckReport r = CheckAotiMatchesEager(PackageUnderTest(bug), nullptr, CheckOptionsFromFlags());
    EXPECT_FALSE(r.pass);
    EXPECT_EQ(r.failure_class, expected) << r.message;
    if (expected == "accuracy") EXPECT_THAT(r.message, HasSubstr("float64 reference on cuda"));
  }
}

}  // namespace
}  // namespace aoti
