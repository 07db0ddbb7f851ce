// raw_tensor_layouts: the C++ half of the cross-language check of the raw tensor format.
//   raw_tensor_layouts write DIR   writes the layouts below as a tensor bundle
//   raw_tensor_layouts check DIR   reads a bundle (written by Python) and checks that each
//                                  tensor equals the layout below in dtype, sizes, strides
//                                  and values
// raw_tensor_format_test.sh builds the same layouts in Python (tools/package_model.py's
// raw_bytes, tensor_record and read_raw_tensor) and runs both directions.
#include <iostream>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/complex.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/scalar_tensor.h>

#include "harness/util/errors.h"
#include "harness/archive/tensor_bundle.h"
#include "harness/archive/tensor_io.h"

namespace {

// Keep in step with LAYOUTS in raw_tensor_format_test.sh.
std::vector<at::Tensor> Layouts() {
  const at::Tensor base = at::arange(24, at::kFloat).reshape({4, 6});
  return {
      base,                                               // contiguous
      base.t(),                                           // transposed
      base.slice(1, 1, 5, 2),                             // a strided slice
      base.select(0, 1).unsqueeze(0).expand({3, 6}),      // expand: stride 0
      base.reshape({4, 6, 1, 1}).expand({4, 6, 2, 3}),    // trailing broadcast dims
      base.to(at::kBFloat16).t(),                         // bfloat16, transposed
      base.gt(10),                                        // bool
      at::complex(base, -base).to(at::kComplexFloat),     // complex64
      base.to(at::kLong).flip({0}),                       // int64 (flip copies: contiguous)
      at::empty({0, 3}, at::kFloat),                      // empty
      at::scalar_tensor(7.5, at::kDouble),                // 0-dim
      base.slice(0, 0, 1).slice(1, 0, 6, 2).slice(1, 0, 1),  // one element, odd strides [6, 2]
  };
}

bool Same(const at::Tensor& a, const at::Tensor& b) {
  return a.scalar_type() == b.scalar_type() && a.sizes() == b.sizes() && a.strides() == b.strides() &&
         at::equal(a, b);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "write" && std::string(argv[1]) != "check")) {
    std::cerr << "usage: raw_tensor_layouts write|check DIR\n";
    return 2;
  }
  const std::string mode = argv[1], dir = argv[2];
  try {
    const auto layouts = Layouts();
    if (mode == "write") {
      aoti::WriteTensorBundle(dir, layouts);
      return 0;
    }
    const auto got = aoti::ReadTensorBundle(dir);
    if (got.size() != layouts.size()) {
      std::cerr << dir << ": " << got.size() << " tensors, expected " << layouts.size() << "\n";
      return 1;
    }
    int bad = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      if (!Same(got[i], layouts[i])) {
        std::cerr << "tensor " << i << ": read " << aoti::DescribeTensor(got[i]) << ", expected "
                  << aoti::DescribeTensor(layouts[i]) << " (or different values)\n";
        ++bad;
      }
    }
    std::cout << "C++ read " << got.size() << " tensors written by Python: " << bad << " differ\n";
    return bad ? 1 : 0;
  } catch (const aoti::HarnessError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
