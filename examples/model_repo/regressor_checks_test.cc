// Several checks of one model in one test target, two packages by key: the regressor as
// shipped ("healthy") and the same regressor with a bug planted in its compiled code
// ("buggy", the failing demo's package). Each package is checked on its sample inputs and
// on prices far outside the training range. The target is sharded (shard_count = 3 in
// BUILD.bazel): each check runs in exactly one shard, and each failing check is reduced
// into its own shard's outputs.zip.
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "matchers/aoti_matches_eager.h"

namespace {

std::vector<at::Tensor> Scaled(const std::string& package, double factor) {
  std::vector<at::Tensor> inputs = aoti::SampleInputs(package);
  inputs[0] = inputs[0] * factor;
  return inputs;
}

TEST(Healthy, SampleInputs) { EXPECT_AOTI_MATCHES_EAGER(aoti::PackageUnderTest("healthy")); }

TEST(Healthy, FarOutOfRange) {
  EXPECT_AOTI_MATCHES_EAGER(aoti::PackageUnderTest("healthy"), Scaled(aoti::PackageUnderTest("healthy"), 10.0));
}

TEST(Buggy, SampleInputs) { EXPECT_AOTI_MATCHES_EAGER(aoti::PackageUnderTest("buggy")); }

TEST(Buggy, FarOutOfRange) {
  EXPECT_AOTI_MATCHES_EAGER(aoti::PackageUnderTest("buggy"), Scaled(aoti::PackageUnderTest("buggy"), 10.0));
}

}  // namespace
