// ProgramState: the tensors a program lifts as inputs: parameters and buffers
// (data/weights/) and tensor constants (data/constants/), by fully qualified name, read
// from the archive's payload configs. Tensors that shared storage when exported share it
// again here (tied weights stay tied).
#pragma once

#include <map>
#include <string>

#include <ATen/core/Tensor.h>

#include "harness/archive/pt2_archive.h"

namespace aoti {

// Where torch.export.save puts each kind of lifted input: parameters and persistent
// buffers in data/weights/, tensor constants, lifted constants (lifted_tensor_N) and
// buffers registered with persistent=False in data/constants/.
struct ProgramState {
  std::map<std::string, at::Tensor> weights;    // parameters and persistent buffers
  std::map<std::string, at::Tensor> constants;  // tensor constants and non-persistent buffers

  // Find: the tensor stored under fqn, looked up first in the table where its kind is
  // stored (in_constants: data/constants/), then in the other one; nullptr if neither has it.
  at::Tensor* Find(const std::string& fqn, bool in_constants);
};

// LoadProgramState puts each tensor on the device recorded in its tensor_meta (a CUDA
// program's weights on the GPU). Throws HarnessError naming the archive and the missing or
// corrupt entry, or the device when this process cannot use it.
// `device`, when given, places every tensor there instead ("cpu" reads a CUDA program's
// weights on a host without CUDA).
ProgramState LoadProgramState(const Pt2Archive& archive, const std::string& model, const std::string& device = "");

}  // namespace aoti
