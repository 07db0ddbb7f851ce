#include "harness/archive/tensor_bundle.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/util/errors.h"
#include "harness/archive/tensor_io.h"

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

void WriteTextFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".partial";
  WriteTextFile(tmp, text);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw HarnessError("cannot move " + tmp + " to " + path + ": " + std::strerror(err));
  }
}

void CopyFileAtomically(const std::string& from, const std::string& to) {
  // By read and write in 1 MiB chunks rather than std::filesystem::copy_file: its sendfile
  // reports a full disk or a file size limit as EIO, where write says what happened.
  const std::string partial = to + ".partial";
  auto fail = [&](const std::string& what, int err, int in, int out) {
    if (in >= 0) ::close(in);
    if (out >= 0) ::close(out);
    ::unlink(partial.c_str());
    throw HarnessError("cannot copy " + from + " to " + to + ": " + what + ": " + std::strerror(err));
  };
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) fail("cannot open " + from, errno, -1, -1);
  const int out = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) fail("cannot create " + partial, errno, in, -1);
  std::vector<char> buffer(1 << 20);
  for (;;) {
    const ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("reading", errno, in, out);
    if (n == 0) break;
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(out, buffer.data() + done, n - done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) fail("writing", errno, in, out);
      done += w;
    }
  }
  ::close(in);
  if (::close(out) != 0) fail("writing", errno, -1, -1);
  if (std::rename(partial.c_str(), to.c_str()) != 0) fail("renaming " + partial, errno, -1, -1);
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
