#include "testdata/shift_recording.h"

#include <cstring>
#include <vector>

#include "harness/archive/archive_rewrite.h"
#include "harness/archive/pt2_archive.h"

namespace aoti {

int ShiftRecording(const std::string& package, const std::string& out) {
  auto archive = Pt2Archive::Open(package);
  int changed = 0;
  RewriteArchive(*archive, out, [&](const std::string& name, std::string* data) {
    auto shift = [&](auto zero) {
      using T = decltype(zero);
      std::vector<T> v(data->size() / sizeof(T));
      std::memcpy(v.data(), data->data(), v.size() * sizeof(T));
      for (auto& x : v) x += static_cast<T>(0.5);
      std::memcpy(data->data(), v.data(), v.size() * sizeof(T));
      ++changed;
    };
    if (name.find("tensors/eager_fp64_0.bin") != std::string::npos) {
      shift(double{});
    } else if (name.find("tensors/eager_0.bin") != std::string::npos) {
      shift(float{});
    }
    return true;
  });
  return changed;
}

}  // namespace aoti
