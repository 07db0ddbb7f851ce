#include "harness/archive/tensor_io.h"

#include <cstring>
#include <sstream>
#include <utility>

#include <ATen/Context.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>

#include "harness/util/errors.h"
#include "harness/util/json_util.h"
#include "harness/util/strings.h"

namespace aoti {
namespace {

const std::vector<std::pair<std::string, c10::ScalarType>>& Names() {
  static const auto* names = new std::vector<std::pair<std::string, c10::ScalarType>>{
      {"float32", c10::ScalarType::Float},     {"float64", c10::ScalarType::Double},
      {"float16", c10::ScalarType::Half},      {"bfloat16", c10::ScalarType::BFloat16},
      {"int8", c10::ScalarType::Char},         {"uint8", c10::ScalarType::Byte},
      {"int16", c10::ScalarType::Short},       {"int32", c10::ScalarType::Int},
      {"int64", c10::ScalarType::Long},        {"bool", c10::ScalarType::Bool},
      {"complex64", c10::ScalarType::ComplexFloat},
      {"complex128", c10::ScalarType::ComplexDouble},
      {"uint16", c10::ScalarType::UInt16},     {"uint32", c10::ScalarType::UInt32},
      {"uint64", c10::ScalarType::UInt64},
      {"float8_e4m3fn", c10::ScalarType::Float8_e4m3fn},
      {"float8_e5m2", c10::ScalarType::Float8_e5m2},
  };
  return *names;
}

}  // namespace

c10::ScalarType ScalarTypeFromName(const std::string& name, const std::string& what) {
  for (const auto& [n, t] : Names()) {
    if (n == name) return t;
  }
  std::string known;
  for (const auto& entry : Names()) known += (known.empty() ? "" : ", ") + entry.first;
  throw HarnessError(what + ": unknown dtype '" + name + "'; expected one of: " + known);
}

std::string ScalarTypeName(c10::ScalarType type) {
  for (const auto& [n, t] : Names()) {
    if (t == type) return n;
  }
  return c10::toString(type);
}

RawTensor EncodeRawTensor(const at::Tensor& t, const std::string& name, const std::string& file) {
  const at::Tensor cpu = t.to(at::kCPU);
  const at::Tensor contiguous = cpu.contiguous();
  RawTensor raw;
  raw.record.name = name;
  raw.record.dtype = cpu.scalar_type();
  raw.record.sizes = cpu.sizes().vec();
  raw.record.strides = cpu.strides().vec();
  raw.record.device = t.device().str();
  raw.record.file = file;
  raw.bytes.assign(static_cast<const char*>(contiguous.data_ptr()), contiguous.nbytes());
  return raw;
}

nlohmann::json TensorRecordToJson(const TensorRecord& record) {
  return {{"name", record.name},         {"dtype", ScalarTypeName(record.dtype)},
          {"sizes", record.sizes},       {"strides", record.strides},
          {"device", record.device},     {"file", record.file}};
}

TensorRecord TensorRecordFromJson(const nlohmann::json& j, const std::string& what) {
  TensorRecord r;
  try {
    r.name = j.value("name", "");
    const std::string who = r.name.empty() ? what : what + " '" + r.name + "'";
    r.dtype = ScalarTypeFromName(j.at("dtype").get<std::string>(), who);
    r.sizes = JsonInts(j.at("sizes"), who + " sizes");
    if (j.contains("strides") && !j.at("strides").is_null()) r.strides = JsonInts(j.at("strides"), who + " strides");
    if (j.contains("device") && !j.at("device").is_null()) {
      r.device = j.at("device").get<std::string>();
      ParseDevice(r.device, who + " device");
    }
    r.file = j.at("file").get<std::string>();
  } catch (const std::exception& e) {  // a JSON type error, or a checked getter's HarnessError
    throw HarnessError(what + ": malformed tensor record " + j.dump().substr(0, 200) +
                       "; expected {\"dtype\": name, \"sizes\": [ints], \"strides\": [ints], \"file\": path}: " +
                       e.what());
  }
  return r;
}

std::optional<int64_t> StorageExtent(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  for (int64_t s : sizes) {
    if (s == 0) return 0;
  }
  int64_t extent = 1;
  for (size_t d = 0; d < sizes.size() && d < strides.size(); ++d) {
    int64_t span = 0;
    if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &span) || __builtin_add_overflow(extent, span, &extent)) {
      return std::nullopt;
    }
  }
  return extent;
}

at::Tensor ReadRawTensor(const TensorRecord& record, const std::string& bytes,
                         const std::string& what) {
  int64_t numel = 1;
  for (int64_t s : record.sizes) {
    if (s < 0) throw HarnessError(what + ": negative size in [" + JoinInts(record.sizes) + "]");
    if (__builtin_mul_overflow(numel, s, &numel)) {
      throw HarnessError(what + ": sizes [" + JoinInts(record.sizes) + "] hold more elements than fit in 64 bits");
    }
  }
  size_t expected = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(numel), c10::elementSize(record.dtype), &expected)) {
    throw HarnessError(what + ": sizes [" + JoinInts(record.sizes) + "] need more bytes than fit in 64 bits");
  }
  if (bytes.size() != expected) {
    throw HarnessError(what + ": holds " + std::to_string(bytes.size()) + " bytes, expected " +
                       std::to_string(expected) + " for " + ScalarTypeName(record.dtype) + "[" +
                       JoinInts(record.sizes) + "]");
  }
  if (!record.strides.empty() && record.strides.size() != record.sizes.size()) {
    throw HarnessError(what + ": strides [" + JoinInts(record.strides) + "] do not match sizes [" +
                       JoinInts(record.sizes) + "]");
  }
  for (int64_t st : record.strides) {
    if (st < 0) throw HarnessError(what + ": negative stride in [" + JoinInts(record.strides) + "]");
  }
  at::Tensor contiguous;
  try {
    contiguous = at::empty(record.sizes, at::TensorOptions().dtype(record.dtype));
  } catch (const c10::Error& e) {
    throw HarnessError(what + ": cannot make a " + ScalarTypeName(record.dtype) + "[" + JoinInts(record.sizes) +
                       "] tensor: " + e.what_without_backtrace());
  }
  if (expected) std::memcpy(contiguous.data_ptr(), bytes.data(), expected);
  if (record.strides.empty() || record.strides == contiguous.strides().vec()) return contiguous;
  // A layout that spans far more memory than its values (a column of a huge matrix) is
  // not rebuilt: the values come back contiguous, as for any layout that cannot be
  // rebuilt. Broadcast dimensions (stride 0) span nothing.
  const std::optional<int64_t> extent = StorageExtent(record.sizes, record.strides);
  if (!extent || *extent > 1024 * numel + (int64_t{1} << 20)) return contiguous;
  std::vector<int64_t> stored_sizes = record.sizes;
  at::Tensor source = contiguous;
  for (size_t d = 0; d < record.sizes.size(); ++d) {
    if (record.strides[d] == 0 && record.sizes[d] > 1) {
      stored_sizes[d] = 1;
      source = source.narrow(static_cast<int64_t>(d), 0, 1);
    }
  }
  // A broadcast layout (stride 0, from expand) holds one copy of each repeated value:
  // write that copy, then view it with the recorded strides again.
  try {
    at::Tensor strided = at::empty_strided(stored_sizes, record.strides, at::TensorOptions().dtype(record.dtype));
    strided.copy_(source);
    return strided.as_strided(record.sizes, record.strides);
  } catch (const c10::Error&) {
    return contiguous;  // some other overlapping layout: the values, laid out contiguously
  }
}

at::Tensor ReadRawTensorOnDevice(const TensorRecord& record, const std::string& bytes, const std::string& what) {
  return PlaceOnDevice(ReadRawTensor(record, bytes, what), record.device, what);
}

c10::Device ParseDevice(const std::string& device, const std::string& what) {
  try {
    return c10::Device(device);
  } catch (const c10::Error& e) {
    throw HarnessError(what + ": '" + device + "' is not a device; expected cpu, cuda or cuda:N (" +
                       e.what_without_backtrace() + ")");
  }
}

std::string DeviceUnavailable(const c10::Device& device) {
  if (device.is_cpu()) return "";
  if (device.is_cuda()) {
    if (!at::hasCUDA()) {
      return "this process has no CUDA device: the harness was built against a CPU-only torch (build with "
             "--config=cuda) or no GPU is visible (CUDA_VISIBLE_DEVICES, the driver)";
    }
    const int64_t count = static_cast<int64_t>(at::getNumGPUs());
    if (device.has_index() && device.index() >= count) {
      return "this host has " + std::to_string(count) + " CUDA device(s), so no " + device.str() +
             " (CUDA_VISIBLE_DEVICES may hide some)";
    }
    return "";
  }
  if (device.is_meta()) return "the meta device holds no values";
  return std::string("the harness runs on cpu and cuda only, not ") + c10::DeviceTypeName(device.type(), true);
}

at::Tensor PlaceOnDevice(const at::Tensor& t, const std::string& device, const std::string& what) {
  const c10::Device target = ParseDevice(device, what + " device");
  if (!t.defined() || t.device() == target) return t;
  const std::string why = DeviceUnavailable(target);
  if (!why.empty()) {
    throw HarnessError(what + ": recorded on " + target.str() + ", which this process cannot use: " + why);
  }
  try {
    return t.to(target);
  } catch (const c10::Error& e) {
    throw HarnessError(what + ": cannot be moved to " + target.str() + ": " + e.what_without_backtrace());
  }
}

bool SupportsFloat64(c10::DeviceType type) {
  return type == c10::DeviceType::CPU || type == c10::DeviceType::CUDA || type == c10::DeviceType::XPU ||
         type == c10::DeviceType::HIP;
}

at::Tensor CopyOf(const at::Tensor& t) {
  if (!t.defined()) return t;
  // A live tensor's layout cannot overflow.
  const int64_t extent = StorageExtent(t.sizes().vec(), t.strides().vec()).value_or(0);
  if (extent == 0) return at::empty_strided(t.sizes(), t.strides(), t.options());
  return t.as_strided({extent}, {1}).clone().as_strided(t.sizes(), t.strides(), 0);
}

std::vector<at::Tensor> CopyOf(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.push_back(CopyOf(t));
  return out;
}

std::string DescribeTensor(const at::Tensor& t) {
  std::ostringstream os;
  os << ScalarTypeName(t.scalar_type()) << "[" << JoinInts(t.sizes().vec()) << "]";
  if (!t.is_contiguous()) os << " strides [" << JoinInts(t.strides().vec()) << "]";
  if (!t.device().is_cpu()) os << " on " << t.device().str();
  return os.str();
}

}  // namespace aoti
