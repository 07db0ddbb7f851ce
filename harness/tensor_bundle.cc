#include "harness/tensor_bundle.h"

#include <fstream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "harness/errors.h"
#include "harness/tensor_io.h"

namespace aoti {

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw HarnessError(path + ": cannot be read");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw HarnessError(path + ": cannot be written");
}

void WriteTensorBundle(const std::string& dir, const std::vector<at::Tensor>& tensors) {
  nlohmann::json manifest = nlohmann::json::array();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const at::Tensor cpu = tensors[i].to(at::kCPU);
    const at::Tensor contiguous = cpu.contiguous();
    const std::string file = "tensor_" + std::to_string(i) + ".bin";
    WriteTextFile(dir + "/" + file,
                  std::string(static_cast<const char*>(contiguous.data_ptr()), contiguous.nbytes()));
    manifest.push_back({{"dtype", ScalarTypeName(cpu.scalar_type())},
                        {"sizes", cpu.sizes().vec()},
                        {"strides", cpu.strides().vec()},
                        {"file", file}});
  }
  WriteTextFile(dir + "/manifest.json", manifest.dump());
}

std::vector<at::Tensor> ReadTensorBundle(const std::string& dir) {
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(ReadTextFile(dir + "/manifest.json"));
  } catch (const nlohmann::json::exception& e) {
    throw HarnessError(dir + "/manifest.json: malformed: " + e.what());
  }
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < manifest.size(); ++i) {
    const auto& m = manifest[i];
    TensorRecord r;
    const std::string what = dir + " tensor " + std::to_string(i);
    r.dtype = ScalarTypeFromName(m.at("dtype").get<std::string>(), what);
    r.sizes = m.at("sizes").get<std::vector<int64_t>>();
    r.strides = m.at("strides").get<std::vector<int64_t>>();
    r.file = m.at("file").get<std::string>();
    out.push_back(ReadRawTensor(r, ReadTextFile(dir + "/" + r.file), what));
  }
  return out;
}

}  // namespace aoti
