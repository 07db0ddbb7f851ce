// The C++ eager interpreter against Python eager on the real-model corpus: every output of
// every model, in float32 and in bfloat16, must be bit-identical (at::equal) to what
// Python's eager run recorded in the package.
#include <iostream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include "harness/flags.h"
#include "harness/interpreter.h"
#include "harness/pt2_archive.h"

DEFINE_string(packages, "", "Comma-separated .pt2 packages to check.");

namespace {

TEST(RealModels, InterpreterIsBitIdenticalToPythonEager) {
  const auto packages = aoti::SplitFlagList(FLAGS_packages);
  ASSERT_EQ(packages.size(), 12u) << "six models, each in float32 and bfloat16";
  for (const auto& path : packages) {
    SCOPED_TRACE(path);
    auto archive = aoti::Pt2Archive::Open(path);
    auto interp = aoti::Interpreter::FromArchive(*archive, "model");
    const auto expected = archive->RecordedEagerOutputs();
    const auto got = interp->RunTensors(archive->SampleInputs());
    ASSERT_EQ(got.size(), expected.size());
    bool identical = true;
    for (size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE("output " + std::to_string(i));
      ASSERT_EQ(got[i].scalar_type(), expected[i].scalar_type());
      ASSERT_EQ(got[i].sizes(), expected[i].sizes());
      const bool same = at::equal(got[i], expected[i]);
      identical = identical && same;
      EXPECT_TRUE(same) << "not bit-identical: max |diff| "
                        << (got[i].to(at::kDouble) - expected[i].to(at::kDouble)).abs().max().item<double>();
    }
    std::cout << "[identity] " << path << " (" << c10::toString(got.at(0).scalar_type()) << "): "
              << (identical ? "bit-identical" : "DIFFERS") << "\n";
  }
}

}  // namespace
