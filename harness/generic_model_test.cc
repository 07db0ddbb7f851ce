// The default test of aoti_model_test: the EXPECT_AOTI_MATCHES_EAGER check on the package named by
// --aoti_package and on each package named by key (--aoti_packages), with its recorded
// sample inputs, and a one-line result per package on stdout.
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "harness/check_flags.h"
#include "harness/errors.h"
#include "harness/flags.h"
#include "matchers/aoti_matches_eager.h"

namespace aoti {
namespace {

void CheckOne(const std::string& package, const CheckOptions& options) {
  CheckReport report;
  const ::testing::AssertionResult result = AotiMatchesEager(package, nullptr, options, &report);
  std::cout << "[aoti] " << package << ": "
            << (report.pass ? "compiled matches eager"
                            : "FAILED (" + report.failure_class +
                                  (report.diagnoses.empty() ? "" : ", diagnosis " + report.diagnoses.front().id) + ")");
  for (size_t i = 0; i < report.comparisons.size(); ++i) {
    const auto& c = report.comparisons[i];
    std::cout << (i ? "; " : " -- ") << "output " << i << " " << c.reason << ", max |compiled-eager| "
              << c.max_abs_diff;
  }
  if (!report.fp64_note.empty()) std::cout << " (" << report.fp64_note << ")";
  std::cout << "\n";
  EXPECT_TRUE(result) << result.message();
}

TEST(AotiModel, CompiledMatchesEager) {
  std::vector<std::pair<std::string, std::string>> packages;  // (key, path)
  try {
    if (!FLAGS_aoti_package.empty()) packages.emplace_back("", FLAGS_aoti_package);
    for (const auto& key : PackageKeys()) packages.emplace_back(key, PackageUnderTest(key));
  } catch (const HarnessError& e) {
    FAIL() << e.what();
  }
  ASSERT_FALSE(packages.empty()) << "pass --aoti_package=<path to .pt2> (or --aoti_packages=KEY=PATH,...)";
  CheckOptions options;
  try {
    options = CheckOptionsFromFlags();
  } catch (const HarnessError& e) {
    FAIL() << e.what();
  }
  for (const auto& [key, path] : packages) {
    SCOPED_TRACE(key.empty() ? "package " + path : "package '" + key + "': " + path);
    CheckOne(path, options);
  }
}

}  // namespace
}  // namespace aoti
