// The native quantized_decomposed operators against torch's own Python definitions, case for
// case, bit for bit: harness/program/quantized_cases.py runs the installed wheel's operators
// on random inputs at build time; each case is called here through the dispatcher, as the
// interpreter calls it, and every output must equal torch's exactly (NaN equal to NaN).
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/archive/tensor_io.h"

namespace aoti {
namespace {

constexpr char kCases[] = "harness/program/quantized_cases";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Cases {
  nlohmann::json doc;
  std::string blob;
};

const Cases& TheCases() {
  static const Cases* cases = new Cases{nlohmann::json::parse(ReadFile(std::string(kCases) + ".json")),
                                        ReadFile(std::string(kCases) + ".bin")};
  return *cases;
}

at::Tensor TensorOf(const nlohmann::json& r, const std::string& blob) {
  TensorRecord rec;
  rec.dtype = ScalarTypeFromName(r.at("dtype").get<std::string>(), "case");
  rec.sizes = r.at("sizes").get<std::vector<int64_t>>();
  return ReadRawTensor(rec, blob.substr(r.at("offset").get<size_t>(), r.at("bytes").get<size_t>()), "case");
}

c10::IValue ValueOf(const nlohmann::json& v, const std::string& blob) {
  if (v.contains("tensor")) return TensorOf(v.at("tensor"), blob);
  if (v.contains("dtype")) return ScalarTypeFromName(v.at("dtype").get<std::string>(), "case");
  if (v.contains("int")) return v.at("int").get<int64_t>();
  if (v.contains("float")) return v.at("float").get<double>();
  return c10::IValue();
}

bool SameBits(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  if (!a.is_floating_point()) return at::equal(a, b);
  return at::eq(a, b).logical_or(at::isnan(a).logical_and(at::isnan(b))).all().item<bool>();
}

TEST(QuantizedOps, EveryCaseGivesTorchsOwnBits) {
  const Cases& cases = TheCases();
  ASSERT_GE(cases.doc.at("cases").size(), 500u);
  std::map<std::string, std::pair<int, int>> by_op;  // op -> (cases, mismatches)
  int mismatches = 0;
  for (const auto& c : cases.doc.at("cases")) {
    const std::string op = "quantized_decomposed::" + c.at("op").get<std::string>();
    const std::string overload = c.at("overload").get<std::string>();
    const auto handle = c10::Dispatcher::singleton().findSchema({op, overload});
    ASSERT_TRUE(handle.has_value()) << op << "." << overload << " is not registered";
    torch::jit::Stack stack;
    const auto& args = c.at("args");
    const auto& schema = handle->schema();
    for (size_t i = 0; i < schema.arguments().size(); ++i) {
      const auto& sa = schema.arguments()[i];
      if (i < args.size()) {
        stack.push_back(ValueOf(args[i], cases.blob));
      } else if (c.at("kwargs").contains(sa.name())) {
        stack.push_back(ValueOf(c.at("kwargs").at(sa.name()), cases.blob));
      } else {
        ASSERT_TRUE(sa.default_value().has_value()) << op << ": argument " << sa.name() << " missing";
        stack.push_back(*sa.default_value());
      }
    }
    handle->callBoxed(&stack);
    const auto& outs = c.at("outputs");
    ASSERT_EQ(stack.size(), outs.size()) << op;
    auto& [n, bad] = by_op[op + (overload.empty() ? "" : "." + overload)];
    ++n;
    for (size_t k = 0; k < outs.size(); ++k) {
      const at::Tensor want = TensorOf(outs[k].at("tensor"), cases.blob), got = stack[k].toTensor();
      if (!SameBits(got, want)) {
        ++bad;
        if (++mismatches <= 5) {
          ADD_FAILURE() << op << "." << overload << " output " << k << ": got " << got.scalar_type() << got.sizes()
                        << ", torch gives " << want.scalar_type() << want.sizes() << "\n  args: " << args.dump()
                        << "\n  kwargs: " << c.at("kwargs").dump();
        }
      }
    }
  }
  for (const auto& [op, counts] : by_op) std::cout << op << ": " << counts.first << " cases, " << counts.second << " differ\n";
  EXPECT_EQ(mismatches, 0);
  EXPECT_GE(by_op.size(), 10u) << "every operator is met";
}

TEST(QuantizedOps, Float64InputQuantizesInFloat64) {
  // The float64 reference: the float math between quantization steps in float64.
  const auto q = c10::Dispatcher::singleton().findSchemaOrThrow("quantized_decomposed::quantize_per_tensor", "");
  torch::jit::Stack stack{at::tensor({0.25, 1.0 / 3.0, 130.0}, at::kDouble), 0.1, int64_t{0}, int64_t{-128},
                          int64_t{127}, c10::ScalarType::Char};
  q.callBoxed(&stack);
  const at::Tensor got = stack[0].toTensor();
  EXPECT_EQ(got.scalar_type(), at::kChar);
  EXPECT_TRUE(at::equal(got, at::tensor({2, 3, 127}, at::kChar))) << got;
}

TEST(QuantizedOps, AnOutOfRangeQuantMinSaysWhich) {
  const auto q = c10::Dispatcher::singleton().findSchemaOrThrow("quantized_decomposed::quantize_per_tensor", "");
  torch::jit::Stack stack{at::ones({2}), 0.1, int64_t{0}, int64_t{-129}, int64_t{127}, c10::ScalarType::Char};
  try {
    q.callBoxed(&stack);
    FAIL() << "expected an error";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what_without_backtrace()).find("quant_min out of bounds"), std::string::npos);
  }
}

}  // namespace
}  // namespace aoti
