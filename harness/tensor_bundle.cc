#include "harness/tensor_bundle.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
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
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) {
    const int err = errno;
    throw HarnessError(path + ": cannot be written (" + std::to_string(text.size()) + " bytes)" +
                       (err ? std::string(": ") + std::strerror(err) : ""));
  }
}

void CopyFileAtomically(const std::string& from, const std::string& to) {
  namespace fs = std::filesystem;
  const std::string partial = to + ".partial";
  std::error_code ec;
  fs::copy_file(from, partial, fs::copy_options::overwrite_existing, ec);
  if (!ec && std::rename(partial.c_str(), to.c_str()) != 0) ec = std::error_code(errno, std::generic_category());
  if (ec) {
    std::error_code ignored;
    fs::remove(partial, ignored);
    throw HarnessError("cannot copy " + from + " to " + to + ": " + ec.message());
  }
}

void WriteTensorBundle(const std::string& dir, const std::vector<at::Tensor>& tensors) {
  nlohmann::json manifest = nlohmann::json::array();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const RawTensor raw = EncodeRawTensor(tensors[i], "", "tensor_" + std::to_string(i) + ".bin");
    WriteTextFile(dir + "/" + raw.record.file, raw.bytes);
    manifest.push_back(TensorRecordToJson(raw.record));
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
    const std::string what = dir + " tensor " + std::to_string(i);
    const TensorRecord r = TensorRecordFromJson(manifest[i], what);
    out.push_back(ReadRawTensorOnDevice(r, ReadTextFile(dir + "/" + r.file), what));
  }
  return out;
}

}  // namespace aoti
