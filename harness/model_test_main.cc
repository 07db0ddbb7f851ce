// The main() of every harness test binary: GoogleTest, then gflags (--aoti_* flags),
// then glog writing to stderr (tests must not leave log files behind), then the
// listeners linked-in libraries registered (the reducer's, in aoti_model_test).
#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include "harness/flags.h"
#include "harness/logging.h"
#include "harness/test_hooks.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  gflags::ParseCommandLineFlags(&argc, &argv, /*remove_flags=*/true);
  aoti::InitLogging(argv[0]);
  aoti::InstallRegisteredListeners();
  return RUN_ALL_TESTS();
}
