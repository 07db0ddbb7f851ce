#include "reducer/value_store.h"

#include "harness/util/errors.h"
#include "harness/archive/tensor_bundle.h"
#include "harness/archive/tensor_io.h"
#include "harness/util/temp_dir.h"

namespace aoti {

void ValueStore::Put(const std::string& name, const at::Tensor& value) {
  if (offload_dir_.empty()) {
    // A snapshot, as the offloaded form is: a later in-place node must not change the
    // value a cut edge gets.
    memory_[name] = CopyOf(value);
    return;
  }
  const std::string dir = offload_dir_ + "/v" + std::to_string(files_.size());
  MakeDirs(dir);
  WriteTensorBundle(dir, {value});
  files_[name] = dir;
}

bool ValueStore::Has(const std::string& name) const { return memory_.count(name) || files_.count(name); }

at::Tensor ValueStore::Get(const std::string& name) const {
  auto m = memory_.find(name);
  if (m != memory_.end()) return m->second;
  auto f = files_.find(name);
  if (f != files_.end()) return ReadTensorBundle(f->second).at(0);
  throw HarnessError("the reducer has no eager value for '" + name + "'");
}

}  // namespace aoti
