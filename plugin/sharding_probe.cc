// sharding_probe: a test binary with the harness' test main and seven trivial checks, for
// sharding_test.sh (which runs it as Bazel runs a shard, and counts where each check ran).
#include <gtest/gtest.h>

namespace {

TEST(Probe, One) {}
TEST(Probe, Two) {}
TEST(Probe, Three) {}
TEST(Probe, Four) {}
TEST(ProbeOther, Five) {}
TEST(ProbeOther, Six) {}
TEST(ProbeOther, Seven) {}

}  // namespace
