// Dynamic shapes: the shapes a package with dynamic dimensions is checked at beyond its
// sample inputs, and inputs made at those shapes by the package's own rule.
//
// A program exported with torch.export Dims has symbolic input sizes (s0, s1, ...) and a
// range for each (range_constraints). AOTI bugs show at sizes the sample never had: a
// dimension specialised during lowering (pytorch#150364), two dynamic dimensions of equal
// size computed wrong (pytorch#153896). ShapePoints names three: every symbol at its
// minimum, every symbol at its maximum, and sizes no two symbols share. InputsAt makes the
// inputs: each one with its sample's dtype, device and layout, its values drawn within the
// range its sample's values span (token ids stay valid ids, a mask stays 0/1).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "harness/program/input_roles.h"
#include "harness/program/program.h"
#include "harness/util/errors.h"

namespace aoti {

struct ShapePoint {
  std::string name;                          // "min", "max", "large", "distinct", or a team's own
  std::map<std::string, int64_t> symbols;    // symbol -> size
  std::vector<std::vector<int64_t>> sizes;   // each input's sizes at this point
  std::string what;                          // what the point is, for messages ("" a team's own)
};

// kMaxShapeInputBytes: the inputs of a planned point take at most this much (1 GiB) unless
// the caller says otherwise.
constexpr int64_t kMaxShapeInputBytes = int64_t{1} << 30;

// ShapePoints: the points for a program whose user inputs have symbolic sizes, given the
// sample inputs (which bind each symbol); empty for a static program. "min": every symbol at
// its minimum. "max": every symbol at its declared maximum; where a symbol has none (taken
// at twice its sample size) or the inputs there would take more than max_input_bytes
// (scaled down toward the sample until they fit), the point is "large" and its `what` says
// which symbol is where and why. "distinct": no two symbols of one size. A derived dimension
// (2*s0) is sized from its root symbol, the root solved from the sample where no other
// dimension binds it. Throws HarnessError naming the input when a dimension is an
// expression this planner cannot bind (two unbound symbols) or that disagrees with the sample.
std::vector<ShapePoint> ShapePoints(const Program& program, const std::vector<at::Tensor>& sample,
                                    int64_t max_input_bytes = kMaxShapeInputBytes);

// ParseShapes: a team's own shapes, "NAME=2x64/2x64,NAME2=..." (one entry per point, the
// sizes of each user input separated by '/', dimensions by 'x', "" for a 0-d input), as
// aoti_model_test(shapes = {...}) passes them. Throws HarnessError naming the entry.
std::vector<ShapePoint> ParseShapes(const std::string& text, size_t inputs);

// InputsCannotBeMade: no inputs at the point can satisfy what the program's operators
// require of one of them (offsets that must both start at 0 and end at a non-zero length
// in one value; an index into an empty dimension). Its message names the input and the
// operator; the point is skipped, not failed.
class InputsCannotBeMade : public HarnessError {
 public:
  using HarnessError::HarnessError;
};

// InputsAt: inputs of the point's sizes, made from `sample` by the package's rule (see
// above), the same for the same seed. `roles` (InputRoles of the program; none: every
// input free) keep what the operators that read an integer input require: an index stays
// below the size it indexes at the point, per-bag offsets start at 0, rise and stay within
// the ids' count. A sample that counts up along its last dimension (positions) is made as
// such a count at the new size. Throws InputsCannotBeMade naming the input.
std::vector<at::Tensor> InputsAt(const ShapePoint& point, const std::vector<at::Tensor>& sample, uint64_t seed,
                                 const std::vector<InputRole>& roles = {});

}  // namespace aoti
