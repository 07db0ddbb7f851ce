// No false alarms: every healthy corpus program, AOTI-compiled, passes
// EXPECT_AOTI_MATCHES_EAGER under the default fp64-RMSE rule.
#include <dirent.h>

#include <algorithm>
#include <iostream>

#include <gtest/gtest.h>

#include "matchers/aoti_matches_eager.h"

namespace aoti {
namespace {

constexpr char kDir[] = "testdata/corpus";

std::vector<std::string> CompiledPrograms() {
  std::vector<std::string> names;
  if (DIR* d = opendir(kDir)) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      const std::string suffix = "_aoti.pt2";
      if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) {
        names.push_back(n.substr(0, n.size() - suffix.size()));
      }
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

class CorpusAoti : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusAoti, CompiledMatchesEager) {
  EXPECT_AOTI_MATCHES_EAGER(std::string(kDir) + "/" + GetParam() + "_aoti.pt2");
}

INSTANTIATE_TEST_SUITE_P(Healthy, CorpusAoti, ::testing::ValuesIn(CompiledPrograms()),
                         [](const auto& info) { return info.param; });

TEST(CorpusAotiSize, CoversTheWholeCorpus) {
  const auto n = CompiledPrograms().size();
  std::cout << "[aoti] healthy compiled programs checked: " << n << "\n";
  ::testing::Test::RecordProperty("aoti_programs_checked", static_cast<int>(n));
  EXPECT_GE(n, 30u);
}

}  // namespace
}  // namespace aoti
