#include "harness/tensor_io.h"

#include <cstring>

#include <ATen/ops/arange.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/errors.h"

namespace aoti {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string Bytes(const at::Tensor& t) {
  at::Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), c.nbytes());
}

TEST(TensorIo, NamesRoundTrip) {
  for (auto t : {c10::ScalarType::Float, c10::ScalarType::Half, c10::ScalarType::BFloat16,
                 c10::ScalarType::Long, c10::ScalarType::Bool, c10::ScalarType::Double}) {
    SCOPED_TRACE(c10::toString(t));
    EXPECT_EQ(ScalarTypeFromName(ScalarTypeName(t), "test"), t);
  }
}

TEST(TensorIo, UnknownDtypeNamesTheInput) {
  try {
    ScalarTypeFromName("float33", "input 'x'");
    FAIL() << "float33 was accepted";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("input 'x'"), HasSubstr("'float33'"), HasSubstr("float32")));
  }
}

TEST(TensorIo, ReadsContiguousAndStrided) {
  at::Tensor src = at::arange(12, at::kFloat).reshape({3, 4});
  TensorRecord rec{"x", c10::ScalarType::Float, {3, 4}, {4, 1}, "f"};
  at::Tensor got = ReadRawTensor(rec, Bytes(src), "x");
  EXPECT_TRUE(got.equal(src));

  at::Tensor transposed = src.t();  // sizes [4, 3], strides [1, 4]
  TensorRecord trec{"xt", c10::ScalarType::Float, {4, 3}, {1, 4}, "f"};
  at::Tensor tgot = ReadRawTensor(trec, Bytes(transposed), "xt");
  EXPECT_TRUE(tgot.equal(transposed));
  EXPECT_FALSE(tgot.is_contiguous());
  EXPECT_EQ(tgot.strides(), transposed.strides());
  EXPECT_EQ(DescribeTensor(tgot), "float32[4, 3] strides [1, 4]");
}

TEST(TensorIo, WrongByteCountIsAnError) {
  TensorRecord rec{"x", c10::ScalarType::Float, {3, 4}, {4, 1}, "f"};
  try {
    ReadRawTensor(rec, std::string(40, '\0'), "archive.pt2: input 0");
    FAIL() << "a short tensor was accepted";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("archive.pt2: input 0"), HasSubstr("40 bytes"),
                                HasSubstr("expected 48"), HasSubstr("float32[3, 4]")));
  }
}

}  // namespace
}  // namespace aoti
