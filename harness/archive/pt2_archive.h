// Pt2Archive: read-only access to a .pt2 archive (a zip with one top folder) as the
// packaging tool writes it: the torch.export program (models/<name>.json, weights), the
// AOTI-compiled model (data/aotinductor/<name>/), its metadata, and the harness manifest
// (extra/aoti_harness/package.json) with the flat sample inputs and recorded eager outputs
// (raw tensors under aoti_harness/tensors/).
//
// Every problem with the file (missing, not a zip, truncated, no such model, no compiled
// model) is a HarnessError whose message names the file and what was expected.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "harness/archive/package_manifest.h"

namespace caffe2::serialize {
class PyTorchStreamReader;
}

namespace aoti {

class Pt2Archive {
 public:
  // Open validates that `path` is a readable zip archive. Throws HarnessError.
  static std::unique_ptr<Pt2Archive> Open(const std::string& path);
  ~Pt2Archive();

  const std::string& path() const { return path_; }

  // Records lists every entry, relative to the archive's top folder.
  std::vector<std::string> Records() const;
  bool HasRecord(const std::string& name) const;
  // ReadRecord returns the entry's bytes; throws HarnessError naming archive and entry.
  std::string ReadRecord(const std::string& name) const;

  // ModelNames: every model the archive holds, as a program (models/<name>.json) or as
  // a compiled model (data/aotinductor/<name>/), sorted.
  std::vector<std::string> ModelNames() const;
  bool HasProgram(const std::string& model) const;
  bool HasCompiledModel(const std::string& model) const;
  // ProgramNotHeld: why the package holds no program for `model` (its manifest's
  // program_not_held: torch's serializer could not write it); "" where it holds one, or the
  // manifest says nothing.
  std::string ProgramNotHeld(const std::string& model) const;
  // RequireModel throws HarnessError listing the models present when `model` is absent.
  void RequireModel(const std::string& model) const;
  // ResolveModelName: `requested` when given (RequireModel); "" means the package's own
  // model: its manifest's model_name, else the one model the archive holds. Throws
  // HarnessError listing the models when the archive holds several and none is named.
  std::string ResolveModelName(const std::string& requested) const;

  // ProgramJson: the text of models/<model>.json.
  std::string ProgramJson(const std::string& model) const;
  // AotiMetadata: AOTI_DEVICE_KEY, AOTI_CPU_ISA, ... from data/aotinductor/<model>/
  // *_metadata.json. Throws HarnessError when the model has no compiled files.
  std::map<std::string, std::string> AotiMetadata(const std::string& model) const;

  // Manifest: the harness' package.json; nullopt for archives the harness did not write.
  const std::optional<PackageManifest>& Manifest() const { return manifest_; }
  // DisplayName: how messages and reports name the package: the Bazel label it was built
  // or brought in by (the manifest's model_file, when it is a label), else the file's name,
  // never a sandbox path.
  std::string DisplayName() const;
  // SampleInputs / RecordedEagerOutputs: the flat tensors named in the manifest. Throw
  // HarnessError when the archive has no manifest. The sample inputs come back on the
  // device they were recorded on (a CUDA package's on the GPU), and the error names the
  // input and the device when this process cannot use it; SampleInputsOnCpu reads the same
  // values on the CPU whatever was recorded (for a preflight or a report on a CPU-only
  // host). The recorded outputs, references only, come back on the CPU.
  std::vector<at::Tensor> SampleInputs() const;
  std::vector<at::Tensor> SampleInputsOnCpu() const;
  // SampleInputDevices: the device each sample input was recorded on ("cpu", "cuda:0").
  std::vector<std::string> SampleInputDevices() const;
  // DeviceType: the device type the model is for: AOTI_DEVICE_KEY when it is compiled,
  // else the type of the device its first sample input was recorded on, else "cpu".
  std::string DeviceType(const std::string& model) const;
  std::vector<at::Tensor> RecordedEagerOutputs() const;
  std::vector<at::Tensor> RecordedEagerFp64Outputs() const;
  // ShapeInputs: the model file's own inputs at shape point `name` (shape_inputs() in the
  // model file; the manifest's shape_inputs), on the device they were recorded on. Throws
  // HarnessError naming the point when the package has none of that name.
  std::vector<at::Tensor> ShapeInputs(const std::string& name) const;

 private:
  Pt2Archive(std::string path, std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader);
  std::vector<at::Tensor> ReadTensors(const std::vector<TensorRecord>& records, const char* what,
                                      bool on_recorded_device) const;
  const PackageManifest& RequireManifest(const char* what) const;

  std::string path_;
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader_;
  std::vector<std::string> records_;
  std::optional<PackageManifest> manifest_;
};

}  // namespace aoti
