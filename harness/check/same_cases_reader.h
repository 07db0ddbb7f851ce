// ReadSameCases: the accuracy rule's differential cases (harness/check/same_cases.py's
// PREFIX.json and PREFIX.bin): the tensors, the tolerance, and the verdicts Python gave
// (upstream's same(); repro.py's rule by accuracy options, where it was asked).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace aoti {

struct SameCase {
  at::Tensor ref, res, fp64;  // eager, compiled, float64 (undefined: none)
  double tol = 0;
  bool ignore_non_fp = false;
  bool same = false;                         // upstream's same()
  std::map<std::string, std::string> repro;  // repro.py's verdict by variant name
};

// Throws std::runtime_error naming the file when it cannot be read or parsed.
std::vector<SameCase> ReadSameCases(const std::string& prefix);

}  // namespace aoti
