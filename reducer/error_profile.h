// ErrorProfile: the error of one failing output, element by element, for the picture in
// report.html: the compiled value minus the float64 reference next to eager's value minus
// the same reference (minus eager itself where there is no float64 reference), so that a
// drift pattern (everywhere, one channel, the tail) shows at a glance. Long outputs are
// cut into equal buckets of consecutive elements, each shown by its largest error (the
// sign kept), so a spike is never averaged away.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "harness/check/check.h"

namespace aoti {

struct ErrorProfile {
  std::string where;           // "the original" or "the repro"
  std::string output;          // the output's name
  size_t output_index = 0;
  std::vector<int64_t> sizes;  // the output's shape
  int64_t numel = 0;
  int64_t bucket = 1;          // consecutive elements per point
  bool against_fp64 = true;    // false: judged against eager (no float64 reference)
  std::vector<double> compiled_error, eager_error;  // one point per bucket
  double max_compiled_error = 0, max_eager_error = 0;  // largest |error| over every element
};

// MakeErrorProfile: the profile of output `index` (compiled, eager, fp64: fp64 may be
// undefined), at most `max_points` points. Non-finite errors are kept as they are.
ErrorProfile MakeErrorProfile(const std::string& where, const std::string& output, size_t index,
                              const at::Tensor& compiled, const at::Tensor& eager, const at::Tensor& fp64,
                              size_t max_points = 2048);

// ProfileFirstFailure: from a report made with CheckOptions::keep_values, the profile of
// the first floating output that failed its comparison; nullopt when there is none (the
// check passed, failed another way, or only non-floating outputs differ).
std::optional<ErrorProfile> ProfileFirstFailure(const std::string& where, const CheckReport& report,
                                                const std::vector<std::string>& output_names);

}  // namespace aoti
