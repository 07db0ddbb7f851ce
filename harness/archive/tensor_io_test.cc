#include "harness/archive/tensor_io.h"

#include <cstring>

#include <ATen/ATen.h>
#include <ATen/ops/arange.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/util/errors.h"

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

TEST(StorageExtent, CountsTheElementsALayoutReaches) {
  EXPECT_EQ(StorageExtent({4, 6}, {6, 1}), 24);
  EXPECT_EQ(StorageExtent({6, 4}, {1, 6}), 24);           // transposed
  EXPECT_EQ(StorageExtent({4, 3}, {6, 2}), 23);           // every other column
  EXPECT_EQ(StorageExtent({3, 6}, {0, 1}), 6);            // broadcast rows span nothing
  EXPECT_EQ(StorageExtent({}, {}), 1);                    // 0-dim
  EXPECT_EQ(StorageExtent({5, 0}, {int64_t{1} << 62, 1}), 0);  // empty, whatever the strides
  EXPECT_EQ(StorageExtent({int64_t{1} << 40, 4}, {int64_t{1} << 40, 1}), std::nullopt);  // overflow
}

TEST(CopyOf, KeepsValuesSizesAndStridesAndOwnsItsMemory) {
  const at::Tensor base = at::arange(24, at::kFloat).reshape({4, 6});
  for (const at::Tensor& t : {base, base.t(), base.slice(1, 1, 5, 2), base.select(0, 1).unsqueeze(0).expand({3, 6}),
                              at::arange(0, at::kFloat)}) {
    SCOPED_TRACE(DescribeTensor(t));
    const at::Tensor c = CopyOf(t);
    EXPECT_TRUE(at::equal(c, t));
    EXPECT_EQ(c.sizes(), t.sizes());
    EXPECT_EQ(c.strides(), t.strides());
    if (t.numel() > 0) {
      EXPECT_NE(c.data_ptr(), t.data_ptr());
      const at::Tensor before = t.clone();
      c.as_strided({1}, {1}).add_(1);  // the copy's first element, valid for any layout
      EXPECT_TRUE(at::equal(t, before));
    }
  }
}

// An expand output (stride 0) read back from its contiguous bytes keeps its layout.
TEST(TensorIo, ReadsBroadcastLayouts) {
  const at::Tensor row = at::arange(6, at::kFloat).reshape({1, 1, 6});
  const at::Tensor expanded = row.expand({2, 3, 6});
  TensorRecord r;
  r.dtype = at::kFloat;
  r.sizes = expanded.sizes().vec();
  r.strides = expanded.strides().vec();  // [6, 6, 1] -> [0, 0, 1]
  const at::Tensor got = ReadRawTensor(r, Bytes(expanded), "expanded");
  EXPECT_TRUE(at::equal(got, expanded));
  EXPECT_EQ(got.strides(), expanded.strides());
}

// One encoder and one decoder: every layout the harness stores comes back as it was.
TEST(TensorIo, EncodeThenReadKeepsEveryLayout) {
  const at::Tensor base = at::arange(24, at::kFloat).reshape({4, 6});
  for (const at::Tensor& t :
       {base, base.t(), base.slice(1, 1, 5, 2), base.select(0, 1).unsqueeze(0).expand({3, 6}),
        base.reshape({4, 6, 1, 1}).expand({4, 6, 2, 3}), base.to(at::kBFloat16).t(), base.gt(10),
        at::complex(base, -base), at::empty({0, 3}, at::kFloat), at::scalar_tensor(7.5, at::kDouble)}) {
    SCOPED_TRACE(DescribeTensor(t));
    const RawTensor raw = EncodeRawTensor(t, "x", "tensors/x.bin");
    const TensorRecord rec = TensorRecordFromJson(TensorRecordToJson(raw.record), "x");
    EXPECT_EQ(rec.file, "tensors/x.bin");
    const at::Tensor got = ReadRawTensor(rec, raw.bytes, "x");
    EXPECT_EQ(got.scalar_type(), t.scalar_type());
    EXPECT_EQ(got.sizes(), t.sizes());
    EXPECT_EQ(got.strides(), t.strides());
    EXPECT_TRUE(at::equal(got, t));
  }
}

// The device travels with the record: written, read back, and honoured on reading.
TEST(TensorIo, TheRecordKeepsTheDevice) {
  const RawTensor raw = EncodeRawTensor(at::arange(6, at::kFloat), "x", "tensors/x.bin");
  EXPECT_EQ(raw.record.device, "cpu");
  TensorRecord rec = TensorRecordFromJson(TensorRecordToJson(raw.record), "x");
  EXPECT_EQ(rec.device, "cpu");
  EXPECT_TRUE(ReadRawTensorOnDevice(rec, raw.bytes, "x").device().is_cpu());

  // A CUDA package's input, recorded on a GPU host and read here.
  nlohmann::json j = TensorRecordToJson(raw.record);
  j["device"] = "cuda:0";
  rec = TensorRecordFromJson(j, "input 'x'");
  EXPECT_EQ(rec.device, "cuda:0");
  EXPECT_EQ(TensorRecordToJson(rec).at("device"), "cuda:0");
  EXPECT_TRUE(ReadRawTensor(rec, raw.bytes, "x").device().is_cpu()) << "ReadRawTensor reads values on the CPU";
  if (DeviceUnavailable(c10::Device("cuda:0")).empty()) {
    EXPECT_TRUE(ReadRawTensorOnDevice(rec, raw.bytes, "input 'x'").is_cuda());
  } else {
    try {
      ReadRawTensorOnDevice(rec, raw.bytes, "input 'x'");
      FAIL() << "expected a HarnessError: this process has no CUDA";
    } catch (const HarnessError& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr("input 'x': recorded on cuda:0"), HasSubstr("no CUDA device")));
    }
  }
  // A record without a device is a CPU one (archives written before the field).
  j.erase("device");
  EXPECT_EQ(TensorRecordFromJson(j, "x").device, "cpu");
}

TEST(TensorIo, AnUnknownDeviceIsRefusedByName) {
  nlohmann::json j = TensorRecordToJson(EncodeRawTensor(at::zeros({2}), "x", "tensors/x.bin").record);
  j["device"] = "gpu0";
  try {
    TensorRecordFromJson(j, "bundle tensor 0");
    FAIL() << "expected a HarnessError";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("bundle tensor 0"), HasSubstr("'gpu0' is not a device"),
                                HasSubstr("expected cpu, cuda or cuda:N")));
  }
  EXPECT_THAT(DeviceUnavailable(c10::Device("meta")), HasSubstr("holds no values"));
  EXPECT_TRUE(SupportsFloat64(c10::DeviceType::CUDA));
  EXPECT_FALSE(SupportsFloat64(c10::DeviceType::MPS));
}

TEST(TensorIo, MalformedRecordNamesTheTensorAndTheExpectedShape) {
  try {
    TensorRecordFromJson(nlohmann::json{{"name", "x"}, {"dtype", "float32"}, {"sizes", "3"}}, "bundle tensor 0");
    FAIL() << "expected a HarnessError";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("bundle tensor 0"), HasSubstr("malformed tensor record"),
                                HasSubstr("\"sizes\": [ints]")));
  }
}

}  // namespace
}  // namespace aoti
