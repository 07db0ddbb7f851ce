// TensorIo: dtype names <-> c10::ScalarType, and the harness' one raw tensor format.
//
// A raw tensor is its values in row-major order (the bytes of `t.contiguous()`) plus a
// record {name, dtype, sizes, strides, device, file}. EncodeRawTensor writes it and ReadRawTensor
// reads it: the recorded strides come back, so a transposed input stays transposed and an
// expand output (stride 0) stays a broadcast view. Every writer in the harness (tensor
// bundles, candidate archives) and every reader (packages, bundles) goes through these
// two; tools/package_model.py holds the Python pair (raw_bytes, read_raw_tensor).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <nlohmann/json.hpp>

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
  std::string device = "cpu";  // where the tensor lived when it was recorded ("cpu", "cuda:0")
  std::string file;
};

// RawTensor: a record and the bytes it describes.
struct RawTensor {
  TensorRecord record;
  std::string bytes;
};

// EncodeRawTensor: `t` (any device, any layout) as a raw tensor named `name`, to be stored
// as `file`. The record keeps t's strides and its device.
RawTensor EncodeRawTensor(const at::Tensor& t, const std::string& name, const std::string& file);

// StorageExtent: the elements of memory a layout reaches from its first element,
// 1 + sum((size - 1) * stride); 0 for an empty layout; nullopt when it overflows 64 bits.
// Sizes and strides of the same length.
std::optional<int64_t> StorageExtent(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides);

// ReadRawTensor builds a CPU tensor from `bytes` (contiguous data), whatever the record's
// device. Throws HarnessError naming `what` when the byte count does not match dtype and
// sizes.
at::Tensor ReadRawTensor(const TensorRecord& record, const std::string& bytes,
                         const std::string& what);

// ReadRawTensorOnDevice: ReadRawTensor, then the tensor moved to the record's device (a
// CUDA package's inputs come back on the GPU). Throws HarnessError naming `what` and the
// device when this process cannot place a tensor there.
at::Tensor ReadRawTensorOnDevice(const TensorRecord& record, const std::string& bytes,
                                 const std::string& what);

// ParseDevice: "cpu", "cuda", "cuda:1", ... as a c10::Device. Throws HarnessError naming
// `what` for anything else.
c10::Device ParseDevice(const std::string& device, const std::string& what);

// DeviceUnavailable: why this process cannot place a tensor on `device`, or "" when it can
// (the CPU always; CUDA when a CUDA build of torch is linked, a GPU is visible and the index
// exists).
std::string DeviceUnavailable(const c10::Device& device);

// PlaceOnDevice: `t` on `device` (a no-op when it is there). Throws HarnessError naming
// `what` when the device is unavailable.
at::Tensor PlaceOnDevice(const at::Tensor& t, const std::string& device, const std::string& what);

// SupportsFloat64: whether kernels of this device type compute in float64 (the CPU and
// CUDA do; MPS does not), so the float64 reference can run there.
bool SupportsFloat64(c10::DeviceType type);

// The record as JSON ({"name", "dtype", "sizes", "strides", "device", "file"}) and back.
// TensorRecordFromJson throws HarnessError naming `what` for a missing or mistyped field.
nlohmann::json TensorRecordToJson(const TensorRecord& record);
TensorRecord TensorRecordFromJson(const nlohmann::json& j, const std::string& what);

// CopyOf: a tensor with its own storage, the same values, sizes and strides (a copy that
// in-place ops on either side cannot reach). Overlapping layouts (stride 0, from expand)
// are kept as such, over a copy of the memory they read.
at::Tensor CopyOf(const at::Tensor& t);
std::vector<at::Tensor> CopyOf(const std::vector<at::Tensor>& ts);

// DescribeTensor: "float32[8, 32]" (with strides when not contiguous).
std::string DescribeTensor(const at::Tensor& t);

}  // namespace aoti
