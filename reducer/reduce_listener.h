// ReduceOnFailureListener: after a test whose AOTI check failed, reduce each recorded
// failing case and write the repro next to it, in $TEST_UNDECLARED_OUTPUTS_DIR/aoti/
// <Suite.Test>/repro/ (CI uploads test.outputs/outputs.zip), plus a Bazel test annotation
// and a line on stderr that points there.
//
// When it acts follows PyTorch's names: it is on with --aoti_reduce_on_failure or
// DUMP_AOTI_MINIFIER=1; AOTINDUCTOR_REPRO_LEVEL (or --aoti_repro_level) says for which
// failures: 1 compile failures only, 2 (default) any failure, 3 any failure (the case
// itself is always written before reducing), 4 accuracy failures only.
#pragma once

#include <gtest/gtest.h>

namespace aoti {

class ReduceOnFailureListener : public ::testing::EmptyTestEventListener {
 public:
  void OnTestEnd(const ::testing::TestInfo& info) override;
};

}  // namespace aoti
