// A package that holds no program: torch's serializer cannot write flex attention's block
// mask (testdata/corpus/flex_attention_block.py), so aoti_package wrote the compiled model
// and Python's recorded eager and float64 outputs without the program, and its manifest says
// why (program_not_held). The check runs the compiled model in the runner and judges it by
// those recordings, at the package's sample inputs only; nothing is reduced.
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
using ::testing::Not;

TEST(NoProgram, ThePackageSaysWhyItHoldsNoProgram) {
  auto archive = Pt2Archive::Open(FLAGS_aoti_package);
  ASSERT_TRUE(archive->Manifest());
  const std::string model = archive->ResolveModelName("");
  EXPECT_FALSE(archive->HasProgram(model));
  EXPECT_TRUE(archive->HasCompiledModel(model));
  EXPECT_THAT(archive->Manifest()->program_not_held,
              AllOf(HasSubstr("torch's serializer cannot write the exported program"), HasSubstr("flex_attention"),
                    HasSubstr("SerializeError")));
  EXPECT_FALSE(archive->Manifest()->eager_outputs.empty());
  EXPECT_FALSE(archive->Manifest()->eager_fp64_outputs.empty());
}

TEST(NoProgram, TheCompiledModelIsJudgedByPythonsRecordingAndPasses) {
  const CheckReport r = CheckAotiMatchesEager(FLAGS_aoti_package, nullptr, CheckOptionsFromFlags());
  EXPECT_TRUE(r.pass) << r.failure_class << ": " << r.message;
  EXPECT_TRUE(r.outcome.ok()) << r.outcome.Summary();
  EXPECT_THAT(r.accuracy_note,
              AllOf(HasSubstr("held without its program"), HasSubstr("flex_attention"),
                    HasSubstr("the compiled model ran in the runner"),
                    HasSubstr("outputs Python recorded when the package was built"), HasSubstr("not reduced")));
  EXPECT_THAT(r.accuracy_note, Not(HasSubstr("Python child")));
}

// A wrong compiled output is caught against Python's recording: here the recording is what
// changed (every recorded eager and float64 value + 0.5), the compiled model is the same.
TEST(NoProgram, ACompiledOutputThatDriftsFromPythonsRecordingFails) {
  TempDir dir("no_program");
  const std::string altered = dir.path() + "/altered.pt2";
  const int changed = ShiftRecording(FLAGS_aoti_package, altered);
  ASSERT_EQ(changed, 2) << "the package's recorded eager and float64 outputs were not found";
  CheckOptions o = CheckOptionsFromFlags();
  o.reruns = 0;  // the failure's rate is not the point here
  const CheckReport r = CheckAotiMatchesEager(altered, nullptr, o);
  EXPECT_EQ(r.failure_class, "accuracy") << r.message;
  EXPECT_THAT(r.message, HasSubstr("held without its program"));
}

TEST(NoProgram, InputsOtherThanTheSampleCannotBeJudged) {
  auto archive = Pt2Archive::Open(FLAGS_aoti_package);
  std::vector<at::Tensor> other = archive->SampleInputsOnCpu();
  for (auto& t : other) t = at::ones_like(t);
  const CheckReport r = CheckAotiMatchesEager(FLAGS_aoti_package, &other, CheckOptionsFromFlags());
  EXPECT_EQ(r.failure_class, "not supported") << r.message;
  EXPECT_THAT(r.message, AllOf(HasSubstr("holds no program"), HasSubstr("sample inputs only"),
                               HasSubstr("Nothing is reduced")));
}

}  // namespace
}  // namespace aoti
