// EnsureOperators: a program's custom operators come from the test's op libraries when the
// test does not link them (this binary links none), and a missing one is named.
#include <ATen/core/dispatch/Dispatcher.h>
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/util/errors.h"
#include "harness/runner/op_libraries.h"

DEFINE_string(op_library, "", "testdata/custom_ops' test_ops_for_python.so");
DEFINE_string(runner, "", "the aoti_runner binary");

namespace aoti {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

Program Calling(const std::string& target) {
  Program p;
  Node n;
  n.name = "op";
  n.target = target;
  p.nodes.push_back(n);
  return p;
}

RunnerOptions With(std::vector<std::string> libraries) {
  RunnerOptions r;
  r.runner_path = FLAGS_runner;
  r.op_libraries = std::move(libraries);
  return r;
}

std::string Error(const Program& p, const RunnerOptions& r) {
  try {
    EnsureOperators(p, r);
  } catch (const HarnessError& e) {
    return e.what();
  }
  return "no error";
}

bool Registered(const char* name) { return c10::Dispatcher::singleton().findSchema({name, ""}).has_value(); }

TEST(OpLibraries, AMissingOperatorWithNoLibraryIsNamed) {
  EXPECT_THAT(Error(Calling("torch.ops.aoti_test.scaled_add.default"), With({})),
              AllOf(HasSubstr("'aoti_test::scaled_add'"), HasSubstr("op_libraries")));
}

TEST(OpLibraries, ABadLibraryIsNamed) {
  EXPECT_THAT(Error(Calling("torch.ops.aoti_test.scaled_add.default"), With({"/nonexistent/libops.so"})),
              HasSubstr("/nonexistent/libops.so"));
}

TEST(OpLibraries, LoadedWhenTheProgramNeedsIt) {
  ASSERT_FALSE(Registered("aoti_test::scaled_add")) << "this test must not link the library";
  EnsureOperators(Calling("torch.ops.aten.relu.default"), With({FLAGS_op_library}));
  EXPECT_FALSE(Registered("aoti_test::scaled_add")) << "loaded though the program did not need it";
  EnsureOperators(Calling("torch.ops.aoti_test.scaled_add.default"), With({FLAGS_op_library}));
  EXPECT_TRUE(Registered("aoti_test::scaled_add"));
  // Once loaded, asked again: nothing is loaded twice.
  EnsureOperators(Calling("torch.ops.aoti_test.null_deref.default"), With({FLAGS_op_library}));
  // An operator the library does not define.
  EXPECT_THAT(Error(Calling("torch.ops.aoti_test.frobnicate.default"), With({FLAGS_op_library})),
              AllOf(HasSubstr("'aoti_test::frobnicate'"), HasSubstr("none of the op libraries")));
}

}  // namespace
}  // namespace aoti
