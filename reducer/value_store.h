// ValueStore: every value of the original program from one eager run, by name. Cut edges
// become inputs with these values. In memory by default; with an offload directory each
// tensor is written to disk as it arrives and read back on use, so a graph with large
// intermediates does not hold them all in memory (upstream's --offload-to-disk).
#pragma once

#include <map>
#include <string>

#include <ATen/core/Tensor.h>

namespace aoti {

class ValueStore {
 public:
  explicit ValueStore(std::string offload_dir = "") : offload_dir_(std::move(offload_dir)) {}

  void Put(const std::string& name, const at::Tensor& value);
  bool Has(const std::string& name) const;
  // Get throws HarnessError when the store has no such value.
  at::Tensor Get(const std::string& name) const;
  size_t size() const { return memory_.size() + files_.size(); }
  bool offloaded() const { return !offload_dir_.empty(); }

 private:
  std::string offload_dir_;
  std::map<std::string, at::Tensor> memory_;
  std::map<std::string, std::string> files_;  // name -> bundle directory
};

}  // namespace aoti
