// A candidate archive keeps each input as it was given: a cut at a transpose or an expand
// is an input with that layout, and the compiled candidate is checked against it.
#include "reducer/candidate_archive.h"

#include <filesystem>
#include <string>

#include <ATen/ATen.h>
#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include "harness/program.h"
#include "harness/pt2_archive.h"
#include "harness/tensor_io.h"

DEFINE_string(package, "", "A compiled package (testdata:mlp).");

namespace aoti {
namespace {

TEST(CandidateArchive, KeepsEachInputsLayout) {
  auto original = Pt2Archive::Open(FLAGS_package);
  const Program program = Program::Parse(original->ProgramJson("model"), FLAGS_package);
  const at::Tensor base = at::arange(24, at::kFloat).reshape({4, 6});
  const std::vector<at::Tensor> inputs = {base.t(), base.select(0, 1).unsqueeze(0).expand({3, 6}),
                                          base.slice(1, 0, 6, 2), at::arange(5, at::kLong)};
  const std::string out = std::string(getenv("TEST_TMPDIR")) + "/candidate.pt2";
  WriteCandidateArchive(*original, "model", program, inputs, "{}", out);

  auto candidate = Pt2Archive::Open(out);
  EXPECT_TRUE(candidate->HasProgram("model"));
  EXPECT_FALSE(candidate->HasCompiledModel("model"));
  const auto got = candidate->SampleInputs();
  ASSERT_EQ(got.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE(DescribeTensor(inputs[i]));
    EXPECT_EQ(got[i].scalar_type(), inputs[i].scalar_type());
    EXPECT_EQ(got[i].sizes(), inputs[i].sizes());
    EXPECT_EQ(got[i].strides(), inputs[i].strides());
    EXPECT_TRUE(at::equal(got[i], inputs[i]));
  }
}

}  // namespace
}  // namespace aoti
