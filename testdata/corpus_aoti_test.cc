// No false alarms: every healthy corpus program, AOTI-compiled, passes
// EXPECT_AOTI_MATCHES_EAGER under the default fp64-RMSE rule. Programs of one kind are
// compiled together as a bundle (testdata/corpus/bundles.bzl); a bundle's check judges
// every output of every program in it.
#include <dirent.h>

#include <algorithm>
#include <iostream>

#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/archive/pt2_archive.h"
#include "harness/check/check.h"
#include "harness/util/failure_class.h"
#include "matchers/aoti_matches_eager.h"
#include "plugin/check_flags.h"

DEFINE_int32(bundled_programs, 0, "how many corpus programs the bundle_* packages hold (bundles.bzl)");

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
  size_t packages = 0, bundles = 0;
  for (const auto& name : CompiledPrograms()) {
    ++packages;
    if (name.rfind("bundle_", 0) == 0) ++bundles;
  }
  ASSERT_GT(bundles, 0u) << "no bundle_* package in " << kDir;
  ASSERT_GT(FLAGS_bundled_programs, 0) << "--bundled_programs is required";
  const int programs = static_cast<int>(packages - bundles) + FLAGS_bundled_programs;
  std::cout << "[aoti] healthy compiled programs checked: " << programs << " in " << packages << " packages ("
            << bundles << " bundles)\n";
  ::testing::Test::RecordProperty("aoti_programs_checked", programs);
  ::testing::Test::RecordProperty("aoti_packages_checked", static_cast<int>(packages));
  EXPECT_GE(programs, 45);
}

// Inputs the model itself refuses (ids beyond their table, a gather's index beyond its
// dimension): eager raises on them as the compiled model fails or reads past its tables. The
// verdict is the inputs', never a compiler bug, and nothing is reduced.
TEST(CorpusInvalidInputs, InputsEagerRefusesAreNotACompilerBug) {
  const std::string package = std::string(kDir) + "/bundle_shapes_aoti.pt2";
  std::vector<at::Tensor> inputs = Pt2Archive::Open(package)->SampleInputs();
  int moved = 0;
  for (auto& t : inputs) {
    if (t.scalar_type() == at::kLong) t = t.add(1000), ++moved;
  }
  ASSERT_GT(moved, 0) << "no integer input in " << package;
  CheckOptions options = CheckOptionsFromFlags();
  options.reruns = 0;
  options.inputs_from = "the sample's integer inputs moved 1000 up by the test";
  const CheckReport r = CheckAotiMatchesEager(package, &inputs, options);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.failure_class, "invalid inputs") << r.message;
  EXPECT_FALSE(IsCompilerFailure(r.failure_class));
  EXPECT_THAT(r.message, ::testing::HasSubstr("eager: node '"));
  EXPECT_THAT(r.message, ::testing::HasSubstr("moved 1000 up by the test"));
}

}  // namespace
}  // namespace aoti
