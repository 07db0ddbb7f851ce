// The main() of every harness test binary: GoogleTest, then gflags (--aoti_* flags),
// then glog writing to stderr (tests must not leave log files behind).
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <gtest/gtest.h>

#include "harness/flags.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  gflags::ParseCommandLineFlags(&argc, &argv, /*remove_flags=*/true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  return RUN_ALL_TESTS();
}
