// WriteCandidateArchive: a candidate program as a .pt2 the compile server can load:
// the edited models/<model>.json, the weights and constants it still uses (copied from
// the original archive; no others, and no other model's), and its inputs as raw tensors
// with a harness manifest. No compiled model and no upstream sample inputs: the compile
// server adds both.
//
// With CandidateWeights::kRandom the floating weights and constants it keeps hold random
// values of the same shape, dtype, mean and standard deviation instead of the model's
// (each stored record drawn once, from a fixed seed, so tied weights stay tied); integer
// and bool ones (indices, masks) keep their values. A repro made so can be shared without
// the model's weights.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "harness/program/program.h"
#include "harness/archive/pt2_archive.h"

namespace aoti {

enum class CandidateWeights { kReal, kRandom };

void WriteCandidateArchive(const Pt2Archive& original, const std::string& model, const Program& program,
                           const std::vector<at::Tensor>& inputs, const std::string& inductor_configs_json,
                           const std::string& out_path, CandidateWeights weights = CandidateWeights::kReal);

}  // namespace aoti
