// A model that calls an operator written only in Python (testdata/corpus/python_only_op.py: a
// torch.library.custom_op), checked where its test asks (aoti_model_test's python_imports,
// --aoti_python_imports): the compiled model runs in a Python child that imports the file
// defining the operator, and is judged against the eager and float64 outputs Python
// recorded when the package was built. Not asked, the check names the operator before
// anything runs (//testdata:triage_test).
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/archive/pt2_archive.h"
#include "harness/check/check.h"
#include "harness/util/temp_dir.h"
#include "plugin/check_flags.h"
#include "plugin/flags.h"
#include "testdata/shift_recording.h"

namespace aoti {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

CheckOptions Asked() {
  CheckOptions o = CheckOptionsFromFlags();
  EXPECT_FALSE(o.runner.python_imports.empty()) << "aoti_model_test's python_imports did not reach the test";
  return o;
}

TEST(PythonHeld, TheCompiledModelRunsInAPythonChildAndPasses) {
  const CheckReport r = CheckAotiMatchesEager(FLAGS_aoti_package, nullptr, Asked());
  EXPECT_TRUE(r.pass) << r.failure_class << ": " << r.message;
  EXPECT_TRUE(r.outcome.ok()) << r.outcome.Summary();
  EXPECT_THAT(r.accuracy_note, AllOf(HasSubstr("held in Python"), HasSubstr("python_only_op.py"),
                                     HasSubstr("outputs Python recorded when the package was built")));
}

TEST(PythonHeld, NotAskedItIsNamedBeforeAnythingRunsAndSaysHowToAsk) {
  CheckOptions o = Asked();
  o.runner.python_imports.clear();
  const CheckReport r = CheckAotiMatchesEager(FLAGS_aoti_package, nullptr, o);
  EXPECT_EQ(r.failure_class, "not supported") << r.message;
  EXPECT_THAT(r.message, AllOf(HasSubstr("corpus_py::soft_clip.default"), HasSubstr("--aoti_python_imports=MODULE")));
}

// A wrong compiled output is caught against Python's recording: here the recording is what
// changed (every recorded eager and float64 value + 0.5), the compiled model is the same.
TEST(PythonHeld, ACompiledOutputThatDriftsFromPythonsRecordingFails) {
  TempDir dir("python_held");
  const std::string altered = dir.path() + "/altered.pt2";
  const int changed = ShiftRecording(FLAGS_aoti_package, altered);
  ASSERT_EQ(changed, 2) << "the package's recorded eager and float64 outputs were not found";
  CheckOptions o = Asked();
  o.reruns = 0;  // the failure's rate is not the point here
  const CheckReport r = CheckAotiMatchesEager(altered, nullptr, o);
  EXPECT_EQ(r.failure_class, "accuracy") << r.message;
  EXPECT_THAT(r.message, HasSubstr("held in Python"));
}

TEST(PythonHeld, InputsOtherThanTheSampleCannotBeJudged) {
  const std::vector<at::Tensor> other = {at::ones({4, 8})};
  const CheckReport r = CheckAotiMatchesEager(FLAGS_aoti_package, &other, Asked());
  EXPECT_EQ(r.failure_class, "not supported") << r.message;
  EXPECT_THAT(r.message, HasSubstr("hold the package's sample inputs only"));
}

TEST(PythonHeld, AModuleTheChildCannotImportIsNamed) {
  CheckOptions o = Asked();
  o.runner.python_imports = {"no_such_module_anywhere"};
  const CheckReport r = CheckAotiMatchesEager(FLAGS_aoti_package, nullptr, o);
  EXPECT_FALSE(r.pass);
  EXPECT_THAT(r.message, AllOf(HasSubstr("--import no_such_module_anywhere: cannot be imported"),
                               HasSubstr("ModuleNotFoundError")));
}

}  // namespace
}  // namespace aoti
