// Input roles: what the program's own operators require of the values of its integer user
// inputs, so that inputs made at another shape mean what the sample's meant.
//
// A recommender's ids index a table, and its per-bag offsets start at 0, rise, and stay
// within the ids' length; a gather's index stays within the dimension it reads. Inputs
// drawn only within the sample's range break these at other sizes (offsets that end past
// fewer ids), and eager then refuses them just as the compiled model does. The roles are
// read from the program: which operator reads the input (through views and copies that
// keep its values), as which argument of its schema, and the size of what it indexes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/program/program.h"

namespace aoti {

struct InputRole {
  enum class Kind {
    kFree,     // no operator the harness knows constrains its values: the sample's range
    kIndex,    // indexes a dimension: values in [0, bound)
    kOffsets,  // per-bag offsets into a flat id list: 0 first, rising, at most its length
  };
  Kind kind = Kind::kFree;
  // kIndex: the size of the dimension it indexes (the indexed value's size, maybe symbolic).
  DimSpec bound;
  // kOffsets: the sizes of the ids the offsets point into (their count is the product), and
  // whether the last offset is the ids' length (include_last_offset).
  std::vector<DimSpec> ids_sizes;
  bool include_last = false;
  // The operator and argument that give the role, for messages: "offsets of node
  // 'embedding_bag' (torch.ops.aten._embedding_bag.default)".
  std::string why;
};

// InputRoles: one role per user input, in order (kFree for any that is not an integer
// tensor, or that no known operator reads). Where two operators constrain one input, the
// tighter index bound and the first offsets role hold.
std::vector<InputRole> InputRoles(const Program& program);

// EvaluateDim: a size at the point's symbols; nullopt where it cannot be evaluated.
std::optional<int64_t> EvaluateDim(const DimSpec& d, const std::map<std::string, int64_t>& symbols);

}  // namespace aoti
