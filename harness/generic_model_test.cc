// The default test of aoti_model_test: the EXPECT_AOTI_MATCHES_EAGER check on the package named by
// --aoti_package, with its recorded sample inputs, and a one-line result on stdout.
#include <iostream>

#include <gtest/gtest.h>

#include "harness/errors.h"
#include "harness/flags.h"
#include "matchers/aoti_matches_eager.h"

namespace aoti {
namespace {

TEST(AotiModel, CompiledMatchesEager) {
  ASSERT_FALSE(FLAGS_aoti_package.empty()) << "pass --aoti_package=<path to .pt2>";
  CheckOptions options;
  try {
    options = CheckOptionsFromFlags();
  } catch (const HarnessError& e) {
    FAIL() << e.what();
  }
  CheckReport report;
  const ::testing::AssertionResult result = AotiMatchesEager(FLAGS_aoti_package, nullptr, options, &report);
  std::cout << "[aoti] " << FLAGS_aoti_package << ": "
            << (report.pass ? "compiled matches eager" : "FAILED (" + report.failure_class + ")");
  for (size_t i = 0; i < report.comparisons.size(); ++i) {
    const auto& c = report.comparisons[i];
    std::cout << (i ? "; " : " -- ") << "output " << i << " " << c.reason << ", max |compiled-eager| "
              << c.max_abs_diff;
  }
  if (!report.fp64_note.empty()) std::cout << " (" << report.fp64_note << ")";
  std::cout << "\n";
  EXPECT_TRUE(result) << result.message();
}

}  // namespace
}  // namespace aoti
