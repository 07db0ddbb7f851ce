// The main() of every harness test binary: Bazel's sharding handed to GoogleTest, then
// GoogleTest, then gflags (--aoti_* flags), then glog writing to stderr (tests must not
// leave log files behind), then the listeners and test registrars linked-in libraries
// registered (the reducer's listener, the generic test's checks at dynamic shapes). The
// matchers (//matchers, which read no flag) get the package under test and the options
// from the flags here, once they are parsed.
//
// Sharding (`shard_count` on an aoti_model_test): Bazel sets TEST_TOTAL_SHARDS,
// TEST_SHARD_INDEX and TEST_SHARD_STATUS_FILE. Its test wrapper passes the first two on
// to GoogleTest as GTEST_*, but not every Bazel version passes the status file, and a
// runner that does not touch it is refused by newer Bazels (or, in older ones, run whole
// in every shard). ShareBazelSharding gives GoogleTest all three (unless GTEST_* are set
// already), so each check runs in exactly one shard and the status file is touched.
#include <stdlib.h>

#include <utility>

#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include "matchers/aoti_matches_eager.h"
#include "plugin/check_flags.h"
#include "plugin/flags.h"
#include "harness/util/logging.h"
#include "plugin/test_hooks.h"

namespace {

void ShareBazelSharding() {
  const char* pairs[][2] = {{"TEST_TOTAL_SHARDS", "GTEST_TOTAL_SHARDS"},
                            {"TEST_SHARD_INDEX", "GTEST_SHARD_INDEX"},
                            {"TEST_SHARD_STATUS_FILE", "GTEST_SHARD_STATUS_FILE"}};
  for (const auto& [bazel, gtest] : pairs) {
    const char* value = ::getenv(bazel);
    if (value && *value) ::setenv(gtest, value, /*overwrite=*/0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ShareBazelSharding();  // before any thread exists: setenv is not thread-safe
  testing::InitGoogleTest(&argc, argv);
  gflags::ParseCommandLineFlags(&argc, &argv, /*remove_flags=*/true);
  aoti::InitLogging(argv[0], FLAGS_v);
  aoti::MatcherDefaults defaults;
  defaults.package = FLAGS_aoti_package;
  defaults.packages = aoti::SplitFlagList(FLAGS_aoti_packages);
  defaults.options = [] { return aoti::CheckOptionsFromFlags(); };
  defaults.reduces_on_failure = aoti::ReducesOnFailure;
  defaults.package_given_by = "--aoti_package";
  defaults.packages_given_by = "--aoti_packages";
  aoti::SetMatcherDefaults(std::move(defaults));
  aoti::InstallRegisteredListeners();
  aoti::RunTestRegistrars();
  return RUN_ALL_TESTS();
}
