// ProgramState: the tensors a program lifts as inputs: parameters and buffers
// (data/weights/) and tensor constants (data/constants/), by fully qualified name, read
// from the archive's payload configs. Tensors that shared storage when exported share it
// again here (tied weights stay tied).
#pragma once

#include <map>
#include <string>

#include <ATen/core/Tensor.h>

#include "harness/pt2_archive.h"

namespace aoti {

struct ProgramState {
  std::map<std::string, at::Tensor> weights;    // parameters and buffers
  std::map<std::string, at::Tensor> constants;  // tensor constants
};

// LoadProgramState throws HarnessError naming the archive and the missing or corrupt entry.
ProgramState LoadProgramState(const Pt2Archive& archive, const std::string& model);

}  // namespace aoti
