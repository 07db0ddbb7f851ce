// TempDir: a private temporary directory, removed with everything in it when the object
// goes away (never throws from the destructor). Made under TEST_TMPDIR when set.
#pragma once

#include <string>

namespace aoti {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "aoti");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // Release: keep the directory on disk (for artifacts); returns its path.
  std::string Release();

 private:
  std::string path_;
  bool keep_ = false;
};

// RemoveTree deletes a directory recursively; errors are ignored.
void RemoveTree(const std::string& path);

// MakeDirs creates a directory and its parents (like mkdir -p); throws HarnessError.
void MakeDirs(const std::string& path);

}  // namespace aoti
