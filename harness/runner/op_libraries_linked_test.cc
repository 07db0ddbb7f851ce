// EnsureOperators in a test that links the operator library (testdata/custom_ops:test_ops)
// and is also given it as a shared object: the library is not loaded a second time (a second
// TORCH_LIBRARY of one namespace would abort the process); a missing operator is named.
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/util/errors.h"
#include "harness/runner/op_libraries.h"

DEFINE_string(op_library, "", "testdata/custom_ops' test_ops_for_python.so");
DEFINE_string(runner, "", "the aoti_runner binary");

namespace aoti {
namespace {

using ::testing::HasSubstr;

TEST(OpLibrariesLinked, NotLoadedTwice) {
  Program p;
  Node n;
  n.target = "torch.ops.aoti_test.not_defined.default";
  p.nodes.push_back(n);
  RunnerOptions r;
  r.runner_path = FLAGS_runner;
  r.op_libraries = {FLAGS_op_library};
  try {
    EnsureOperators(p, r);
    FAIL() << "no error for an operator nobody defines";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'aoti_test::not_defined'"));
  }
  // Still alive: the library linked in was not registered again. Its ops work.
  n.target = "torch.ops.aoti_test.scaled_add.default";
  p.nodes = {n};
  EnsureOperators(p, r);
}

}  // namespace
}  // namespace aoti
