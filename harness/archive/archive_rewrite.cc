#include "harness/archive/archive_rewrite.h"

#include <caffe2/serialize/inline_container.h>

namespace aoti {

void RewriteArchive(const Pt2Archive& archive, const std::string& path,
                    const std::function<bool(const std::string& name, std::string* data)>& edit) {
  caffe2::serialize::PyTorchStreamWriter w(path);
  for (const auto& rec : archive.Records()) {
    if (rec == ".data/version" || rec == "byteorder" || rec == ".data/serialization_id") continue;  // the writer's own
    std::string data = archive.ReadRecord(rec);
    if (edit(rec, &data)) w.writeRecord(rec, data.data(), data.size());
  }
  w.writeEndOfFile();
}

}  // namespace aoti
