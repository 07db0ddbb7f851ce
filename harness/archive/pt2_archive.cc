#include "harness/archive/pt2_archive.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <utility>

#include <caffe2/serialize/inline_container.h>
#include <c10/util/Exception.h>
#include <nlohmann/json.hpp>

#include "harness/util/errors.h"
#include "harness/util/strings.h"

namespace aoti {
namespace {

constexpr const char kModelsDir[] = "models/";
constexpr const char kAotiDir[] = "data/aotinductor/";
constexpr const char kManifest[] = "extra/aoti_harness/package.json";
constexpr const char kTensorDir[] = "aoti_harness/";  // manifest "file" paths are relative to it

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

// CheckZipFile rejects what is not a zip before the zip reader sees it, with our words.
void CheckZipFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw HarnessError(path + ": no such file; expected a .pt2 archive (build it with aoti_package)");
  }
  if (!S_ISREG(st.st_mode)) throw HarnessError(path + ": not a regular file; expected a .pt2 archive");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw HarnessError(path + ": cannot be read (permission?); expected a .pt2 archive");
  if (st.st_size == 0) throw HarnessError(path + ": empty file; expected a .pt2 zip archive");
  char magic[4] = {};
  in.read(magic, sizeof(magic));
  if (in.gcount() < 4 || std::memcmp(magic, "PK\x03\x04", 4) != 0) {
    throw HarnessError(path + ": not a zip archive (no zip signature at the start); expected a "
                       ".pt2 archive written by aoti_package or torch.export");
  }
}

}  // namespace

Pt2Archive::Pt2Archive(std::string path,
                       std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader)
    : path_(std::move(path)), reader_(std::move(reader)) {
  try {
    records_ = reader_->getAllRecords();
  } catch (const c10::Error& e) {
    throw HarnessError(path_ + ": the zip directory is corrupt (" + e.what_without_backtrace() +
                       "); expected a .pt2 archive written by aoti_package or torch.export");
  }
  std::sort(records_.begin(), records_.end());
}

Pt2Archive::~Pt2Archive() = default;

std::unique_ptr<Pt2Archive> Pt2Archive::Open(const std::string& path) {
  CheckZipFile(path);
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader;
  try {
    reader = std::make_unique<caffe2::serialize::PyTorchStreamReader>(path);
  } catch (const c10::Error& e) {
    throw HarnessError(path + ": truncated or corrupt zip archive (" + e.what_without_backtrace() +
                       "); expected a complete .pt2 archive");
  } catch (const std::exception& e) {
    throw HarnessError(path + ": cannot be opened as a zip archive (" + e.what() + ")");
  }
  std::unique_ptr<Pt2Archive> archive(new Pt2Archive(path, std::move(reader)));
  if (archive->HasRecord("archive_format")) {
    const std::string format = archive->ReadRecord("archive_format");
    if (format != "pt2") {
      throw HarnessError(path + ": archive_format is " + Quoted(format) + ", expected 'pt2'");
    }
  }
  if (archive->HasRecord(kManifest)) {
    archive->manifest_ = ParsePackageManifest(archive->ReadRecord(kManifest), path);
  }
  return archive;
}

std::vector<std::string> Pt2Archive::Records() const { return records_; }

bool Pt2Archive::HasRecord(const std::string& name) const {
  return std::binary_search(records_.begin(), records_.end(), name);
}

std::string Pt2Archive::ReadRecord(const std::string& name) const {
  if (!HasRecord(name)) throw HarnessError(path_ + ": has no entry " + Quoted(name));
  try {
    auto [data, size] = reader_->getRecord(name);
    return std::string(static_cast<const char*>(data.get()), size);
  } catch (const c10::Error& e) {
    throw HarnessError(path_ + ": entry " + Quoted(name) + " cannot be read, the archive is corrupt (" +
                       e.what_without_backtrace() + ")");
  }
}

std::vector<std::string> Pt2Archive::ModelNames() const {
  std::set<std::string> names;
  for (const auto& r : records_) {
    if (StartsWith(r, kModelsDir) && EndsWith(r, ".json") && r.find('/', sizeof(kModelsDir) - 1) == std::string::npos) {
      names.insert(r.substr(sizeof(kModelsDir) - 1, r.size() - (sizeof(kModelsDir) - 1) - 5));
    } else if (StartsWith(r, kAotiDir)) {
      const size_t slash = r.find('/', sizeof(kAotiDir) - 1);
      if (slash != std::string::npos) names.insert(r.substr(sizeof(kAotiDir) - 1, slash - (sizeof(kAotiDir) - 1)));
    }
  }
  return {names.begin(), names.end()};
}

bool Pt2Archive::HasProgram(const std::string& model) const {
  return HasRecord(kModelsDir + model + ".json");
}

std::string Pt2Archive::ProgramNotHeld(const std::string& model) const {
  if (!manifest_ || manifest_->program_not_held.empty() || HasProgram(model)) return "";
  return manifest_->program_not_held;
}

bool Pt2Archive::HasCompiledModel(const std::string& model) const {
  const std::string prefix = kAotiDir + model + "/";
  auto it = std::lower_bound(records_.begin(), records_.end(), prefix);
  return it != records_.end() && StartsWith(*it, prefix);
}

void Pt2Archive::RequireModel(const std::string& model) const {
  if (HasProgram(model) || HasCompiledModel(model)) return;
  std::string present;
  for (const auto& n : ModelNames()) present += (present.empty() ? "" : ", ") + Quoted(n);
  throw HarnessError(path_ + ": has no model " + Quoted(model) + "; it holds " +
                     (present.empty() ? std::string("no models at all") : "models: " + present));
}

std::string Pt2Archive::ResolveModelName(const std::string& requested) const {
  if (!requested.empty()) {
    RequireModel(requested);
    return requested;
  }
  if (manifest_ && !manifest_->model_name.empty()) {
    RequireModel(manifest_->model_name);
    return manifest_->model_name;
  }
  const std::vector<std::string> names = ModelNames();
  if (names.size() == 1) return names[0];
  std::string present;
  for (const auto& n : names) present += (present.empty() ? "" : ", ") + Quoted(n);
  throw HarnessError(path_ + ": " +
                     (names.empty() ? std::string("holds no models at all (models/<name>.json, data/aotinductor/<name>/)")
                                    : "holds several models (" + present + ") and no manifest names one; name the "
                                      "model under test (--aoti_model_name, aoti_prebuilt_package's model_name)"));
}

std::string Pt2Archive::ProgramJson(const std::string& model) const {
  RequireModel(model);
  if (!HasProgram(model)) {
    throw HarnessError(path_ + ": model " + Quoted(model) + " has no program (models/" + model +
                       ".json); expected an archive written by aoti_package or torch.export.save");
  }
  return ReadRecord(kModelsDir + model + ".json");
}

std::map<std::string, std::string> Pt2Archive::AotiMetadata(const std::string& model) const {
  RequireModel(model);
  if (!HasCompiledModel(model)) {
    throw HarnessError(path_ + ": model " + Quoted(model) + " has no compiled model (" + kAotiDir +
                       model + "/)");
  }
  std::map<std::string, std::string> metadata;
  const std::string prefix = kAotiDir + model + "/";
  for (const auto& r : records_) {
    if (!StartsWith(r, prefix) || !EndsWith(r, "_metadata.json")) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(ReadRecord(r));
    } catch (const nlohmann::json::exception& e) {
      throw HarnessError(path_ + ": " + r + " is not valid JSON: " + e.what());
    }
    if (!j.is_object()) throw HarnessError(path_ + ": " + r + " is not a JSON object");
    for (const auto& [k, v] : j.items()) {
      if (!metadata.count(k)) metadata[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
  }
  return metadata;
}

const PackageManifest& Pt2Archive::RequireManifest(const char* what) const {
  if (!manifest_) {
    throw HarnessError(path_ + ": has no " + kManifest + ", so no recorded " + what +
                       "; expected an archive written by aoti_package");
  }
  return *manifest_;
}

std::vector<at::Tensor> Pt2Archive::ReadTensors(const std::vector<TensorRecord>& records, const char* what,
                                                bool on_recorded_device) const {
  std::vector<at::Tensor> out;
  out.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string entry = kTensorDir + records[i].file;
    const std::string who = path_ + ": " + what + " " + std::to_string(i) +
                            (records[i].name.empty() ? "" : " '" + records[i].name + "'") + " (" + entry + ")";
    out.push_back(on_recorded_device ? ReadRawTensorOnDevice(records[i], ReadRecord(entry), who)
                                     : ReadRawTensor(records[i], ReadRecord(entry), who));
  }
  return out;
}

std::vector<at::Tensor> Pt2Archive::SampleInputs() const {
  return ReadTensors(RequireManifest("sample inputs").inputs, "sample input", true);
}

std::vector<at::Tensor> Pt2Archive::SampleInputsOnCpu() const {
  return ReadTensors(RequireManifest("sample inputs").inputs, "sample input", false);
}

std::vector<at::Tensor> Pt2Archive::ShapeInputs(const std::string& name) const {
  for (const auto& [point, records] : RequireManifest("shape inputs").shape_inputs) {
    if (point == name) return ReadTensors(records, ("input at shape " + name).c_str(), true);
  }
  throw HarnessError(path_ + ": the package holds no inputs of the model file's for shape '" + name + "'");
}

std::vector<std::string> Pt2Archive::SampleInputDevices() const {
  std::vector<std::string> devices;
  for (const auto& r : RequireManifest("sample inputs").inputs) devices.push_back(r.device);
  return devices;
}

std::string Pt2Archive::DeviceType(const std::string& model) const {
  if (HasCompiledModel(model)) {
    const auto metadata = AotiMetadata(model);
    auto it = metadata.find("AOTI_DEVICE_KEY");
    if (it != metadata.end() && !it->second.empty()) return it->second;
  }
  if (manifest_ && !manifest_->inputs.empty()) {
    const std::string& d = manifest_->inputs[0].device;
    return d.substr(0, d.find(':'));
  }
  return "cpu";
}

std::vector<at::Tensor> Pt2Archive::RecordedEagerOutputs() const {
  return ReadTensors(RequireManifest("eager outputs").eager_outputs, "eager output", false);
}

}  // namespace aoti

namespace aoti {

std::vector<at::Tensor> Pt2Archive::RecordedEagerFp64Outputs() const {
  return ReadTensors(RequireManifest("float64 eager outputs").eager_fp64_outputs, "fp64 eager output", false);
}

std::string Pt2Archive::DisplayName() const {
  if (manifest_) {
    const std::string& label = manifest_->model_file;
    if (StartsWith(label, "//") || StartsWith(label, "@")) return label;
  }
  return std::filesystem::path(path_).filename().string();
}

}  // namespace aoti
