// TensorBundle: a list of tensors in a directory (manifest.json + one raw file each), the
// way the test process and the isolated runner hand inputs and outputs to each other.
// Dtype, sizes and strides survive the trip.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace aoti {

// WriteTensorBundle writes the values of `tensors` into `dir` (which must exist), each
// with its device.
void WriteTensorBundle(const std::string& dir, const std::vector<at::Tensor>& tensors);

// ReadTensorBundle reads them back, each on the device it was written from (the runner's
// inputs and outputs stay on the GPU). Throws HarnessError naming the directory, the tensor
// and the device when this process cannot use it.
std::vector<at::Tensor> ReadTensorBundle(const std::string& dir);

// ReadTextFile / WriteTextFile: whole-file helpers that throw HarnessError naming the path.
std::string ReadTextFile(const std::string& path);
void WriteTextFile(const std::string& path, const std::string& text);

// WriteTextFileAtomically: `text` written to `path`.partial and renamed onto `path`, so a
// reader (or a test killed at its timeout) sees the whole file or the one before, never half.
void WriteTextFileAtomically(const std::string& path, const std::string& text);

// CopyFileAtomically: copies `from` to `to` by streaming it (a model's .pt2 can be
// gigabytes; it is never held in memory), through `to`.partial renamed into place, so a
// reader never sees half a file. Throws HarnessError naming both paths.
void CopyFileAtomically(const std::string& from, const std::string& to);

}  // namespace aoti
