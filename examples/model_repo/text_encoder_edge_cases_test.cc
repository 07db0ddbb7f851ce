// A test of our own for the text encoder, with inputs of our own: the package was
// exported with random token ids; these are the edge cases (the first and the last id of
// the vocabulary, one id repeated). Same shapes as the sample inputs, other values.
#include <functional>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "matchers/aoti_matches_eager.h"

namespace {

std::vector<at::Tensor> WithIds(const std::function<at::Tensor(const at::Tensor&)>& ids) {
  std::vector<at::Tensor> inputs = aoti::SampleInputs(aoti::PackageUnderTest());
  inputs[0] = ids(inputs[0]);
  return inputs;
}

TEST(TextEncoder, FirstAndLastTokenIds) {
  EXPECT_AOTI_MATCHES_EAGER(aoti::PackageUnderTest(), WithIds([](const at::Tensor& t) {
                              const at::Tensor even = at::arange(t.size(1)).remainder(2).eq(0);
                              return at::where(even, at::zeros_like(t), at::full_like(t, 255));
                            }));
}

TEST(TextEncoder, OneTokenRepeated) {
  EXPECT_AOTI_MATCHES_EAGER(aoti::PackageUnderTest(), WithIds([](const at::Tensor& t) { return at::full_like(t, 7); }));
}

}  // namespace
