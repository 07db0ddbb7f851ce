// quantized_decomposed: the quantize and dequantize operators PyTorch's PT2E flow puts in an
// int8 program (convert_pt2e), run natively. PyTorch defines them in Python only
// (torch/ao/quantization/fx/_decomposed.py), so a C++ process has none of them; a program
// that calls them could not run in eager or float64 without these.
//
// The semantics are torch's, step for step through the same ATen operators (round half to
// even, the product with the reciprocal scale in the input's dtype, clamping to
// [quant_min, quant_max], then the cast), so the interpreter gives Python's bits; the
// differential test (quantized_ops_test, against values torch wrote) holds it to that.
// One difference, on purpose: a float64 input quantizes in float64 (the float64 reference
// keeps the float math between quantization steps in float64; torch refuses such input).
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

namespace aoti {
namespace {

// The quantized value bounds of each dtype these operators take.
std::pair<int64_t, int64_t> Bounds(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::ScalarType::Byte: return {0, 255};
    case c10::ScalarType::Char: return {-128, 127};
    case c10::ScalarType::Short: return {-32768, 32767};
    case c10::ScalarType::Int: return {INT32_MIN, INT32_MAX};
    case c10::ScalarType::UInt16: return {0, 65535};
    default:
      TORCH_CHECK(false, "quantized_decomposed: unsupported quantized dtype ", dtype,
                  " (expected uint8, int8, int16, int32 or uint16)");
  }
}

void CheckBounds(int64_t quant_min, int64_t quant_max, c10::ScalarType dtype) {
  const auto [lo, hi] = Bounds(dtype);
  TORCH_CHECK(quant_min >= lo, "quant_min out of bounds for dtype, quant_min_lower_bound: ", lo, " quant_min: ",
              quant_min);
  TORCH_CHECK(quant_max <= hi, "quant_max out of bounds for dtype, quant_max_upper_bound: ", hi, " quant_max: ",
              quant_max);
}

// FloatInput: half and bfloat16 become float32, as torch does; float32 and float64 stay.
at::Tensor FloatInput(const at::Tensor& input) {
  if (input.scalar_type() == at::kHalf || input.scalar_type() == at::kBFloat16) return input.to(at::kFloat);
  TORCH_CHECK(input.scalar_type() == at::kFloat || input.scalar_type() == at::kDouble,
              "Expecting input to have dtype torch.float32, but got dtype: ", input.scalar_type());
  return input;
}

void CheckQuantized(const at::Tensor& input, c10::ScalarType dtype) {
  TORCH_CHECK(input.scalar_type() == dtype, "Expecting input to have dtype: ", dtype, ", but got ",
              input.scalar_type());
}

at::Tensor QuantizePerTensor(const at::Tensor& input, double scale, int64_t zero_point, int64_t quant_min,
                             int64_t quant_max, c10::ScalarType dtype) {
  const at::Tensor x = FloatInput(input);
  CheckBounds(quant_min, quant_max, dtype);
  const double inv_scale = 1.0 / scale;
  return at::clamp(at::round(x * inv_scale) + zero_point, quant_min, quant_max).to(dtype);
}

double OneDouble(const at::Tensor& t, const char* what) {
  TORCH_CHECK(t.numel() == 1, "Expecting ", what, " tensor to be one element, but received : ", t.numel());
  return t.item<double>();
}

int64_t OneInt(const at::Tensor& t, const char* what) {
  TORCH_CHECK(t.numel() == 1, "Expecting ", what, " tensor to be one element, but received : ", t.numel());
  return t.item<int64_t>();
}

at::Tensor QuantizePerTensorT(const at::Tensor& input, const at::Tensor& scale, const at::Tensor& zero_point,
                              int64_t quant_min, int64_t quant_max, c10::ScalarType dtype) {
  return QuantizePerTensor(input, OneDouble(scale, "scale"), OneInt(zero_point, "zero_point"), quant_min, quant_max,
                           dtype);
}

at::Tensor QuantizePerTensorT2(const at::Tensor& input, const at::Tensor& scale, const at::Tensor& zero_point,
                               const at::Tensor& quant_min, const at::Tensor& quant_max, c10::ScalarType dtype) {
  return QuantizePerTensor(input, OneDouble(scale, "scale"), OneInt(zero_point, "zero_point"),
                           OneInt(quant_min, "quant_min"), OneInt(quant_max, "quant_max"), dtype);
}

at::Tensor DequantizePerTensor(const at::Tensor& input, double scale, int64_t zero_point, int64_t quant_min,
                               int64_t quant_max, c10::ScalarType dtype, std::optional<c10::ScalarType> out_dtype) {
  CheckQuantized(input, dtype);
  Bounds(dtype);
  return (input.to(out_dtype.value_or(at::kFloat)) - zero_point) * scale;
}

at::Tensor DequantizePerTensorT(const at::Tensor& input, const at::Tensor& scale, const at::Tensor& zero_point,
                                int64_t quant_min, int64_t quant_max, c10::ScalarType dtype,
                                std::optional<c10::ScalarType> out_dtype) {
  return DequantizePerTensor(input, OneDouble(scale, "scale"), OneInt(zero_point, "zero_point"), quant_min, quant_max,
                             dtype, out_dtype);
}

at::Tensor DequantizePerTensorT2(const at::Tensor& input, const at::Tensor& scale, const at::Tensor& zero_point,
                                 const at::Tensor& quant_min, const at::Tensor& quant_max, c10::ScalarType dtype,
                                 std::optional<c10::ScalarType> out_dtype) {
  return DequantizePerTensor(input, OneDouble(scale, "scale"), OneInt(zero_point, "zero_point"),
                             OneInt(quant_min, "quant_min"), OneInt(quant_max, "quant_max"), dtype, out_dtype);
}

// AlongAxis: a per-channel parameter shaped to broadcast along `axis` of `like`.
at::Tensor AlongAxis(const at::Tensor& p, const at::Tensor& like, int64_t axis) {
  std::vector<int64_t> shape(static_cast<size_t>(like.dim()), 1);
  shape[static_cast<size_t>(axis)] = p.size(0);
  return p.view(shape);
}

int64_t CheckAxis(int64_t axis, const at::Tensor& input) {
  TORCH_CHECK(axis < input.dim(), "Expecting axis to be < ", input.dim());
  return axis < 0 ? axis + input.dim() : axis;
}

at::Tensor QuantizePerChannel(const at::Tensor& input, const at::Tensor& scales, const at::Tensor& zero_points,
                              int64_t axis, int64_t quant_min, int64_t quant_max, c10::ScalarType dtype) {
  const at::Tensor x = FloatInput(input);
  axis = CheckAxis(axis, x);
  CheckBounds(quant_min, quant_max, dtype);
  const at::Tensor inv = AlongAxis(scales, x, axis).reciprocal();
  return at::clamp(at::round(x * inv) + AlongAxis(zero_points, x, axis), quant_min, quant_max).to(dtype);
}

at::Tensor DequantizePerChannel(const at::Tensor& input, const at::Tensor& scales,
                                const std::optional<at::Tensor>& zero_points, int64_t axis, int64_t quant_min,
                                int64_t quant_max, c10::ScalarType dtype, std::optional<c10::ScalarType> out_dtype) {
  CheckQuantized(input, dtype);
  axis = CheckAxis(axis, input);
  CheckBounds(quant_min, quant_max, dtype);
  const at::Tensor s = AlongAxis(scales, input, axis);
  const at::Tensor res = zero_points && zero_points->defined() ? (input - AlongAxis(*zero_points, input, axis)) * s
                                                               : input * s;
  return res.to(out_dtype.value_or(at::kFloat));
}

// ChooseQparams: per-tensor affine scale and zero point from the input's range, as torch's
// determine_qparams does for per_tensor_affine (the range widened to hold 0; a scale no
// smaller than eps; an all-invalid range gives scale 1, zero point 0).
std::tuple<at::Tensor, at::Tensor> ChooseQparams(const at::Tensor& input, int64_t quant_min, int64_t quant_max,
                                                 double eps, c10::ScalarType dtype) {
  TORCH_CHECK(input.scalar_type() == at::kFloat || input.scalar_type() == at::kHalf ||
                  input.scalar_type() == at::kBFloat16 || input.scalar_type() == at::kDouble,
              "Expecting input to have dtype torch.float32/16/b16, but got dtype: ", input.scalar_type());
  Bounds(dtype);
  TORCH_CHECK(quant_min <= quant_max, "quant_min must be less than or equal to quant_max");
  const auto [min_val, max_val] = at::aminmax(input);
  if (input.numel() == 0 || !(min_val.item<double>() <= max_val.item<double>())) {
    return {at::tensor({1.0}, at::kDouble), at::tensor({int64_t{0}}, at::kLong)};
  }
  const at::Tensor min_neg = at::minimum(min_val, at::zeros_like(min_val));
  const at::Tensor max_pos = at::maximum(max_val, at::zeros_like(max_val));
  at::Tensor scale = (max_pos - min_neg) / static_cast<double>(quant_max - quant_min);
  scale = at::maximum(scale, at::tensor({eps}, scale.options()));
  at::Tensor zero_point = quant_min - at::round(min_neg / scale).to(at::kInt);
  zero_point = at::clamp(zero_point, quant_min, quant_max);
  return {scale.reshape({1}).to(at::kDouble), zero_point.reshape({1}).to(at::kLong)};
}

// ChoosePerTokenAsymmetric: per-token int8 scale and zero point, as torch's
// _choose_qparams_per_token_asymmetric_impl computes them.
std::tuple<at::Tensor, at::Tensor> ChoosePerTokenAsymmetric(const at::Tensor& input, c10::ScalarType) {
  const double qmin = -128, qmax = 127;
  const at::Tensor min_val = at::amin(input, {-1}, true), max_val = at::amax(input, {-1}, true);
  const at::Tensor min_neg = at::minimum(min_val, at::zeros_like(min_val));
  const at::Tensor max_pos = at::maximum(max_val, at::zeros_like(max_val));
  const double eps = std::numeric_limits<float>::epsilon();
  const at::Tensor scale = ((max_pos - min_neg) / (qmax - qmin)).clamp_min(eps);
  const at::Tensor lo = min_neg / scale, hi = max_pos / scale;
  at::Tensor zero_point = at::where((qmin + lo) + (qmax + hi) > 0, qmin - lo, qmax - hi);
  zero_point = at::clamp(zero_point, qmin, qmax).round();
  return {scale.to(at::kDouble), zero_point.to(at::kLong)};
}

void CheckPerToken(const at::Tensor& input, const at::Tensor& scales, const at::Tensor& zero_points) {
  int64_t tokens = 1;
  for (int64_t d = 0; d + 1 < input.dim(); ++d) tokens *= input.size(d);
  TORCH_CHECK(tokens == scales.numel(), "num_tokens: ", tokens, " scales: ", scales.sizes());
  TORCH_CHECK(tokens == zero_points.numel(), "num_tokens: ", tokens, " zero_points: ", zero_points.sizes());
}

at::Tensor QuantizePerToken(const at::Tensor& input, const at::Tensor& scales, const at::Tensor& zero_points,
                            int64_t quant_min, int64_t quant_max, c10::ScalarType dtype) {
  CheckBounds(quant_min, quant_max, dtype);
  CheckPerToken(input, scales, zero_points);
  return input.mul(scales.reciprocal()).add(zero_points).round().clamp(quant_min, quant_max).to(dtype);
}

at::Tensor DequantizePerToken(const at::Tensor& input, const at::Tensor& scales, const at::Tensor& zero_points,
                              int64_t, int64_t, c10::ScalarType, c10::ScalarType output_dtype) {
  return ((input - zero_points) * scales).to(output_dtype);
}

}  // namespace

// The schemas are torch's, so that a program's arguments bind as they do in Python.
TORCH_LIBRARY(quantized_decomposed, m) {
  m.def("quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, "
        "ScalarType dtype) -> Tensor", &QuantizePerTensor);
  m.def("quantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max, "
        "ScalarType dtype) -> Tensor", &QuantizePerTensorT);
  m.def("quantize_per_tensor.tensor2(Tensor input, Tensor scale, Tensor zero_point, Tensor quant_min, "
        "Tensor quant_max, ScalarType dtype) -> Tensor", &QuantizePerTensorT2);
  m.def("dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, "
        "ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor", &DequantizePerTensor);
  m.def("dequantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max, "
        "ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor", &DequantizePerTensorT);
  m.def("dequantize_per_tensor.tensor2(Tensor input, Tensor scale, Tensor zero_point, Tensor quant_min, "
        "Tensor quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor", &DequantizePerTensorT2);
  m.def("quantize_per_channel(Tensor input, Tensor scales, Tensor zero_points, int axis, int quant_min, "
        "int quant_max, ScalarType dtype) -> Tensor", &QuantizePerChannel);
  m.def("dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, "
        "int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor", &DequantizePerChannel);
  m.def("choose_qparams.tensor(Tensor input, int quant_min, int quant_max, float eps, ScalarType dtype) -> "
        "(Tensor, Tensor)", &ChooseQparams);
  m.def("choose_qparams_per_token_asymmetric(Tensor input, ScalarType dtype) -> (Tensor, Tensor)",
        &ChoosePerTokenAsymmetric);
  m.def("quantize_per_token(Tensor input, Tensor scales, Tensor zero_points, int quant_min, int quant_max, "
        "ScalarType dtype) -> Tensor", &QuantizePerToken);
  m.def("dequantize_per_token(Tensor input, Tensor scales, Tensor zero_points, int quant_min, int quant_max, "
        "ScalarType dtype, ScalarType output_dtype) -> Tensor", &DequantizePerToken);
}

}  // namespace aoti
