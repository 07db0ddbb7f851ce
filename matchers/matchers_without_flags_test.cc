// The matchers in a test binary of its own: GoogleTest's main, no gflags. The package and
// the options come from SetMatcherDefaults, and the check runs as under aoti_model_test.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/util/errors.h"
#include "matchers/aoti_matches_eager.h"

namespace aoti {
namespace {

constexpr char kMlp[] = "testdata/mlp.pt2";  // //testdata:mlp, in this test's runfiles

TEST(MatchersWithoutFlags, NoPackageSaysHowToGiveOne) {
  SetMatcherDefaults({});
  try {
    PackageUnderTest();
    FAIL() << "expected a HarnessError";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("MatcherDefaults::package is empty"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("aoti::SetMatcherDefaults"), std::string::npos) << e.what();
  }
}

TEST(MatchersWithoutFlags, ChecksThePackageGiven) {
  MatcherDefaults defaults;
  defaults.package = kMlp;
  defaults.packages = {"small=" + std::string(kMlp)};
  SetMatcherDefaults(defaults);
  EXPECT_EQ(PackageUnderTest(), kMlp);
  EXPECT_EQ(PackageUnderTest("small"), kMlp);
  EXPECT_EQ(PackageKeys(), std::vector<std::string>{"small"});
  EXPECT_AOTI_MATCHES_EAGER(PackageUnderTest());
  EXPECT_AOTI_MATCHES_EAGER(PackageUnderTest("small"), SampleInputs(kMlp));
}

TEST(MatchersWithoutFlags, OptionsComeFromTheDefaults) {
  MatcherDefaults defaults;
  defaults.package = kMlp;
  defaults.options = []() -> CheckOptions { throw HarnessError("options: bad tolerance 'x'"); };
  SetMatcherDefaults(defaults);
  const ::testing::AssertionResult result = AotiMatchesEager(PackageUnderTest());
  EXPECT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("AOTI check not run: options: bad tolerance 'x'"), std::string::npos)
      << result.message();
}

TEST(MatchersWithoutFlags, AMalformedKeyedEntryNamesWhereItCameFrom) {
  MatcherDefaults defaults;
  defaults.packages = {"no-equals-sign"};
  defaults.packages_given_by = "my packages";
  SetMatcherDefaults(defaults);
  try {
    PackageUnderTest("small");
    FAIL() << "expected a HarnessError";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("my packages: 'no-equals-sign' is not KEY=PATH"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace aoti
