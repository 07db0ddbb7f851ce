// TensorIo: dtype names <-> c10::ScalarType, and tensors from raw little-endian bytes.
//
// The packaging tool writes each flat input and eager output as the tensor's contiguous
// bytes plus a record {dtype, sizes, strides}. ReadRawTensor rebuilds the tensor with the
// recorded strides, so a non-contiguous input stays non-contiguous.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

namespace aoti {

// ScalarTypeFromName maps "float32", "bfloat16", "int64", "bool", ... to the ScalarType.
// Throws HarnessError naming `what` for an unknown name.
c10::ScalarType ScalarTypeFromName(const std::string& name, const std::string& what);

// ScalarTypeName is the inverse ("float32" for Float).
std::string ScalarTypeName(c10::ScalarType type);

// TensorRecord describes one raw tensor stored in an archive.
struct TensorRecord {
  std::string name;
  c10::ScalarType dtype = c10::ScalarType::Float;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  std::string file;
};

// ReadRawTensor builds a CPU tensor from `bytes` (contiguous data). Throws HarnessError
// naming `what` when the byte count does not match dtype and sizes.
at::Tensor ReadRawTensor(const TensorRecord& record, const std::string& bytes,
                         const std::string& what);

// CopyOf: a tensor with its own storage, the same values, sizes and strides (a copy that
// in-place ops on either side cannot reach). Overlapping layouts (stride 0, from expand)
// are kept as such, over a copy of the memory they read.
at::Tensor CopyOf(const at::Tensor& t);
std::vector<at::Tensor> CopyOf(const std::vector<at::Tensor>& ts);

// DescribeTensor: "float32[8, 32]" (with strides when not contiguous).
std::string DescribeTensor(const at::Tensor& t);

}  // namespace aoti
