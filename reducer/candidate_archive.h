// WriteCandidateArchive: a candidate program as a .pt2 the compile server can load:
// the edited models/<model>.json, the weights and constants it still uses (copied from
// the original archive), and its inputs as raw tensors with a harness manifest. No
// compiled model and no upstream sample inputs: the compile server adds both.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "harness/program.h"
#include "harness/pt2_archive.h"

namespace aoti {

void WriteCandidateArchive(const Pt2Archive& original, const std::string& model, const Program& program,
                           const std::vector<at::Tensor>& inputs, const std::string& inductor_configs_json,
                           const std::string& out_path);

}  // namespace aoti
