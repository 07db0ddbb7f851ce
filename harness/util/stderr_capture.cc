#include "harness/util/stderr_capture.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace aoti {

StderrCapture::StderrCapture() {
  std::fflush(stderr);
  const char* tmpdir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/aoti_stderr_XXXXXX";
  capture_fd_ = ::mkstemp(path.data());
  if (capture_fd_ < 0) return;  // capture unavailable: stderr stays as it is
  ::unlink(path.c_str());
  saved_fd_ = ::dup(STDERR_FILENO);
  if (saved_fd_ < 0 || ::dup2(capture_fd_, STDERR_FILENO) < 0) {
    if (saved_fd_ >= 0) ::close(saved_fd_);
    ::close(capture_fd_);
    capture_fd_ = saved_fd_ = -1;
  }
}

std::string StderrCapture::Text() const {
  if (capture_fd_ < 0) return "";
  std::fflush(stderr);
  std::string text;
  char buf[4096];
  off_t offset = 0;
  ssize_t n;
  while ((n = ::pread(capture_fd_, buf, sizeof(buf), offset)) > 0) {
    text.append(buf, static_cast<size_t>(n));
    offset += n;
  }
  return text;
}

std::string LastLines(const std::string& text, size_t max_lines) {
  size_t pos = text.size();
  for (size_t n = 0; n <= max_lines && pos > 0; ++n) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) return text;
  }
  return text.substr(pos + 1);
}

StderrCapture::~StderrCapture() {
  if (capture_fd_ < 0) return;
  const std::string text = Text();
  ::dup2(saved_fd_, STDERR_FILENO);
  ::close(saved_fd_);
  ::close(capture_fd_);
  if (!text.empty()) {
    ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
    (void)ignored;
  }
}

}  // namespace aoti
