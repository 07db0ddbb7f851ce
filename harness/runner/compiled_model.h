// CompiledModel: the AOTI-compiled model of a .pt2 archive, loaded in this process with
// libtorch's AOTIModelPackageLoader.
//
// Load explains a missing compiled model: when the packaging tool recorded a compile
// failure it says so with the compiler's error, never as a missing file. Run turns the
// generic "API call failed" of the AOTI C ABI into an AotiRunError that carries what the
// generated code printed on stderr.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "harness/util/errors.h"
#include "harness/archive/pt2_archive.h"

namespace torch::inductor {
class AOTIModelPackageLoader;
}

namespace aoti {

// AotiCompileError: the archive records that the AOTI compile failed at packaging time.
class AotiCompileError : public HarnessError {
 public:
  using HarnessError::HarnessError;
};

// AotiLoadError: the compiled model exists but libtorch could not load it.
class AotiLoadError : public HarnessError {
 public:
  using HarnessError::HarnessError;
};

// AotiRunError: the compiled model raised while running. stderr_text is what it printed.
class AotiRunError : public HarnessError {
 public:
  AotiRunError(const std::string& message, std::string stderr_text)
      : HarnessError(message), stderr_text_(std::move(stderr_text)) {}
  const std::string& stderr_text() const { return stderr_text_; }

 private:
  std::string stderr_text_;
};

class CompiledModel {
 public:
  // Load: throws AotiCompileError, AotiLoadError, or HarnessError (no such model).
  static std::unique_ptr<CompiledModel> Load(const Pt2Archive& archive, const std::string& model);
  ~CompiledModel();

  std::vector<at::Tensor> Run(const std::vector<at::Tensor>& inputs);
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  CompiledModel() = default;
  std::string what_;
  std::map<std::string, std::string> metadata_;
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
};

}  // namespace aoti
