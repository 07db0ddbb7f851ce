#include "harness/util/temp_dir.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "harness/util/errors.h"

namespace aoti {
namespace {

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
  ::remove(path);
  return 0;
}

}  // namespace

TempDir::TempDir(const std::string& prefix) {
  const char* base = std::getenv("TEST_TMPDIR");
  if (!base || !*base) base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/" + prefix + "_XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    throw HarnessError("cannot create a temporary directory from " + templ + ": " + std::strerror(errno));
  }
  path_ = templ;
}

TempDir::~TempDir() {
  if (!keep_ && !path_.empty()) RemoveTree(path_);
}

std::string TempDir::Release() {
  keep_ = true;
  return path_;
}

void RemoveTree(const std::string& path) {
  ::nftw(path.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
}

void MakeDirs(const std::string& path) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      throw HarnessError("cannot create directory " + partial + ": " + std::strerror(errno));
    }
  }
}

}  // namespace aoti
