// The default test of aoti_model_test: load the package named by --aoti_package, run its
// AOTI-compiled model on the recorded sample inputs, and compare each output with the
// eager output the packaging tool recorded at build time.
//
// This build-time comparison is a stop-gap: the C++ eager interpreter and the fp64
// verdict (EXPECT_AOTI_MATCHES_EAGER) replace it.
#include <cmath>
#include <sstream>

#include <ATen/TensorOperators.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/argmax.h>
#include <gtest/gtest.h>

#include "harness/compiled_model.h"
#include "harness/flags.h"
#include "harness/pt2_archive.h"
#include "harness/tensor_io.h"

namespace aoti {
namespace {

constexpr double kRtol = 1e-4;
constexpr double kAtol = 1e-5;

TEST(AotiModel, CompiledMatchesRecordedEager) {
  ASSERT_FALSE(FLAGS_aoti_package.empty()) << "pass --aoti_package=<path to .pt2>";
  std::unique_ptr<Pt2Archive> archive;
  std::unique_ptr<CompiledModel> model;
  try {
    archive = Pt2Archive::Open(FLAGS_aoti_package);
    model = CompiledModel::Load(*archive, FLAGS_aoti_model_name);
  } catch (const HarnessError& e) {
    FAIL() << e.what();
  }
  const auto inputs = archive->SampleInputs();
  const auto expected = archive->RecordedEagerOutputs();
  std::vector<at::Tensor> got;
  try {
    got = model->Run(inputs);
  } catch (const AotiRunError& e) {
    FAIL() << e.what();
  }
  ASSERT_EQ(got.size(), expected.size()) << "the compiled model returned " << got.size()
                                         << " outputs, eager returned " << expected.size();
  std::ostringstream summary;
  const auto& records = archive->Manifest()->eager_outputs;
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i) + " '" + records[i].name + "'");
    ASSERT_EQ(got[i].scalar_type(), expected[i].scalar_type());
    ASSERT_EQ(got[i].sizes(), expected[i].sizes());
    const at::Tensor diff = (got[i].to(at::kDouble) - expected[i].to(at::kDouble)).abs();
    const double max_diff = diff.numel() ? diff.max().item<double>() : 0.0;
    const int64_t worst = diff.numel() ? diff.reshape(-1).argmax().item<int64_t>() : 0;
    summary << (i ? ", " : "") << records[i].name << " " << DescribeTensor(got[i])
            << " max|compiled-eager|=" << max_diff;
    EXPECT_TRUE(at::allclose(got[i], expected[i], kRtol, kAtol))
        << "compiled and eager differ: greatest absolute difference " << max_diff
        << " at flat index " << worst << " (compiled " << got[i].reshape(-1)[worst].item<double>()
        << ", eager " << expected[i].reshape(-1)[worst].item<double>() << "), allowed rtol "
        << kRtol << " atol " << kAtol;
  }
  RecordProperty("aoti_outputs", summary.str());
  std::cout << "[aoti] " << archive->Manifest()->model_file << ": " << summary.str() << "\n";
}

}  // namespace
}  // namespace aoti
