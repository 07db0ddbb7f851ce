#include "harness/program/program_state.h"

#include <cstring>

#include <ATen/ops/empty.h>
#include <nlohmann/json.hpp>

#include "harness/util/errors.h"
#include "harness/util/json_util.h"
#include "harness/program/program.h"
#include "harness/archive/tensor_io.h"

namespace aoti {
namespace {

using json = nlohmann::json;

std::vector<int64_t> Ints(const json& dims, const std::string& what) {
  std::vector<int64_t> out;
  for (const auto& d : dims) {
    DimSpec dim = DimFromJson(d);
    if (dim.is_symbolic()) throw HarnessError(what + ": symbolic size '" + dim.sym + "' in a stored tensor");
    out.push_back(dim.size);
  }
  return out;
}

// ViewStored: one stored tensor as a view of its file's bytes (`storage`), after checking
// that its sizes, strides and offset fit in them.
at::Tensor ViewStored(const json& tm, const at::Tensor& storage, const std::string& file, const std::string& what) {
  const c10::ScalarType dtype = ScalarTypeFromSchema(JsonInt32(tm.at("dtype"), what + " dtype"), what);
  const auto sizes = Ints(tm.at("sizes"), what);
  const auto strides = Ints(tm.at("strides"), what);
  const int64_t offset = DimFromJson(tm.value("storage_offset", json{{"as_int", 0}})).size;
  const int64_t item = static_cast<int64_t>(c10::elementSize(dtype));
  if (sizes.size() != strides.size()) {
    throw HarnessError(what + ": " + std::to_string(sizes.size()) + " sizes but " + std::to_string(strides.size()) +
                       " strides");
  }
  if (offset < 0) throw HarnessError(what + ": negative storage offset " + std::to_string(offset));
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0 || strides[i] < 0) {
      throw HarnessError(what + ": negative size or stride (dimension " + std::to_string(i) + ")");
    }
  }
  const std::optional<int64_t> extent = StorageExtent(sizes, strides);
  const bool empty = extent && *extent == 0;
  int64_t needed = 0;
  if (!empty && (!extent || __builtin_add_overflow(offset, *extent, &needed) ||
                 __builtin_mul_overflow(needed, item, &needed))) {
    throw HarnessError(what + ": its sizes, strides and offset reach past 64-bit addresses");
  }
  if (needed > storage.numel()) {
    throw HarnessError(what + ": " + file + " holds " + std::to_string(storage.numel()) + " bytes, the tensor needs " +
                       std::to_string(needed));
  }
  const auto options = at::TensorOptions().dtype(dtype).device(storage.device());
  at::Tensor typed = storage.numel() % item == 0 && storage.numel() > 0 ? storage.view(dtype) : at::empty({0}, options);
  at::Tensor t;
  try {
    t = empty ? at::empty(sizes, options) : typed.as_strided(sizes, strides, offset).detach();
  } catch (const c10::Error& e) {
    throw HarnessError(what + ": cannot be viewed as stored: " + e.what_without_backtrace());
  }
  // As torch.export.load gives it: a parameter keeps requires_grad. Kernels read the
  // flag even without autograd (matmul folds a batched input into one mm only when the
  // weight does not require grad), so the interpreter must match Python bit for bit.
  if (tm.value("requires_grad", false) && (at::isFloatingType(dtype) || at::isComplexType(dtype))) {
    t.set_requires_grad(true);
  }
  return t;
}

void LoadPayload(const Pt2Archive& archive, const std::string& dir, const std::string& config_name,
                 const std::string& device_override, std::map<std::string, at::Tensor>& out) {
  const std::string config_path = dir + config_name;
  if (!archive.HasRecord(config_path)) return;  // nothing of this kind
  json config;
  try {
    config = json::parse(archive.ReadRecord(config_path)).at("config");
  } catch (const json::exception& e) {
    throw HarnessError(archive.path() + ": " + config_path + " is malformed: " + e.what());
  }
  // One byte buffer per file and device: tensors that share a file share its storage.
  std::map<std::pair<std::string, std::string>, at::Tensor> storages;
  for (const auto& [fqn, meta] : config.items()) {
    const std::string what = archive.path() + ": '" + fqn + "' (" + config_path + ")";
    try {
      if (meta.value("use_pickle", false)) {
        throw HarnessError(what + " is stored pickled (a tensor subclass); the C++ interpreter "
                           "reads raw tensors only");
      }
      const std::string file = dir + meta.at("path_name").get<std::string>();
      if (!archive.HasRecord(file)) {
        throw HarnessError(what + ": its data " + file + " is missing from the archive");
      }
      const json& tm = meta.at("tensor_meta");
      // The device it was exported on (a CUDA model's weights on the GPU).
      const std::string device = !device_override.empty() ? device_override
                                 : tm.contains("device") ? DeviceNameFromSchema(tm.at("device"), what)
                                                         : "cpu";
      auto it = storages.find({file, device});
      if (it == storages.end()) {
        const std::string bytes = archive.ReadRecord(file);
        at::Tensor storage = at::empty({static_cast<int64_t>(bytes.size())}, at::kByte);
        if (!bytes.empty()) std::memcpy(storage.data_ptr(), bytes.data(), bytes.size());
        it = storages.emplace(std::make_pair(file, device), PlaceOnDevice(storage, device, what)).first;
      }
      out[fqn] = ViewStored(tm, it->second, file, what);
    } catch (const json::exception& e) {
      throw HarnessError(what + ": malformed entry: " + e.what());
    }
  }
}

}  // namespace

at::Tensor* ProgramState::Find(const std::string& fqn, bool in_constants) {
  auto& first = in_constants ? constants : weights;
  auto& second = in_constants ? weights : constants;
  for (auto* table : {&first, &second}) {
    auto it = table->find(fqn);
    if (it != table->end()) return &it->second;
  }
  return nullptr;
}

ProgramState LoadProgramState(const Pt2Archive& archive, const std::string& model, const std::string& device) {
  archive.RequireModel(model);
  ProgramState state;
  LoadPayload(archive, "data/weights/", model + "_weights_config.json", device, state.weights);
  LoadPayload(archive, "data/constants/", model + "_constants_config.json", device, state.constants);
  return state;
}

}  // namespace aoti
