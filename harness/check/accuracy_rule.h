// AccuracyRule: is a compiled output close enough to eager? The default is the rule
// PyTorch's accuracy minifier uses (same() in torch/_dynamo/utils.py, as called by
// same_two_models with equal_nan), so verdicts agree with upstream:
//
//   1. dtypes (and shapes) must match;
//   2. pass when allclose(eager, compiled, atol = rtol = tol) (NaNs equal; rtol scales
//      |compiled|; computed in the outputs' dtype; bool as uint8; integers too);
//   3. otherwise, with a float64 reference, pass when
//        RMSE(compiled, fp64) <= multiplier * RMSE(eager, fp64) + tol / 10,
//      multiplier 2.0, or 3.0 for fp16/bf16 results, for numel < 1000, for 4-D tensors
//      whose last two dims are 1, and when tol >= 0.02;
//      also pass when only eager has NaNs and compiled is allclose(fp64, 0.04);
//   4. outputs with no real float64 reference (complex, integers, a failed float64 run)
//      that are not allclose fail, or pass with ignore_non_fp, as upstream's do;
//      bool and integer outputs are ignored with ignore_non_fp, or compared exactly with
//      exact_non_fp (off by default: a choice of ours, not upstream's).
//
// harness/check/accuracy_rule_differential_test checks this rule against the wheel's same()
// on over 10,000 generated cases.
//
// SQNR mode (a quantized program's rule): each floating output passes when its
// signal-to-quantization-noise ratio against eager, 10 log10(sum eager^2 / sum (compiled -
// eager)^2) in float64, is at least min_sqnr_db (30 dB, what PyTorch's own quantization tests
// ask); integer and bool outputs as under the fp64 rule without a reference (allclose at tol,
// or exact / ignored as asked). The check picks it for a program with quantized_decomposed
// operators unless the test chose a mode (mode_chosen).
//
// Strict mode is allclose only. kAssertClose is torch.testing.assert_close(compiled, eager):
// its per-dtype defaults (rtol, atol) instead of tol, or the test's own rtol and atol, with
// rtol scaling |eager| (NaNs equal). repro.py's own rule (reducer/repro/repro_template.py)
// gives the same verdicts: //reducer:repro_rule_differential_test.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace aoti {

enum class AccuracyMode {
  kFp64Rmse,     // upstream's accuracy rule (default)
  kStrict,       // allclose(eager, compiled, tol, tol) only
  kAssertClose,  // torch.testing.assert_close defaults per dtype
  kSqnr,         // a quantized program: compiled against eager's Q/DQ by SQNR in dB
};

struct AccuracyOptions {
  AccuracyMode mode = AccuracyMode::kFp64Rmse;
  double tol = 1e-3;            // upstream's repro_tolerance
  bool ignore_non_fp = false;   // skip bool/integer outputs
  // Compare bool and integer outputs exactly. Off by default: upstream's same() allows
  // allclose at tol for them too (|eager - compiled| <= tol + tol * |compiled|).
  bool exact_non_fp = false;
  // kAssertClose only: the test's own tolerances, as torch.testing.assert_close(rtol=,
  // atol=) takes them; negative: that dtype's default (AssertCloseTolerances).
  double rtol = -1, atol = -1;
  // kSqnr only: the least SQNR an output passes with, in dB.
  double min_sqnr_db = 30;
  // mode_chosen: the test (a flag, its environment, a case file) chose the mode; else the
  // check may pick the rule that fits the program (SQNR for a quantized one). Not written to
  // a case: a case's mode is always its own choice.
  bool mode_chosen = false;
};

// AccuracyModeName: the one spelling of a mode (fp64, strict, assert_close), used by the
// flags, case.json, repro.py and messages alike.
std::string AccuracyModeName(AccuracyMode mode);
// ParseAccuracyMode: the inverse; throws HarnessError naming `what` (a flag, a file's
// field) and the spellings there are.
AccuracyMode ParseAccuracyMode(const std::string& name, const std::string& what);

// AssertCloseTolerances: torch.testing.assert_close's default (rtol, atol) for a dtype.
std::pair<double, double> AssertCloseTolerances(c10::ScalarType dtype);

// TensorComparison: the verdict on one output, with what a person needs to act on it.
struct TensorComparison {
  bool pass = false;
  std::string reason;         // why it passed or failed, one phrase
  int64_t numel = 0;
  int64_t mismatched = 0;     // elements outside allclose(rtol, atol)
  double rtol = 0, atol = 0;  // the element-wise tolerances used for counting
  double max_abs_diff = 0;
  std::vector<int64_t> max_abs_index;
  double max_rel_diff = 0;
  std::vector<int64_t> max_rel_index;
  double got = 0, eager = 0, fp64 = 0;  // at max_abs_index
  bool has_fp64 = false;
  double rmse_compiled = 0, rmse_eager = 0;  // against fp64
  double multiplier = 0, bound = 0;          // RMSE bound = multiplier * rmse_eager + tol/10
  double sqnr_db = 0;                        // kSqnr: SQNR against eager, dB (+inf: equal)
  bool judged_by_sqnr = false;
};

// Sqnr: 10 log10(sum ref^2 / sum (got - ref)^2) in float64, dB; +inf when they are equal,
// -inf when ref is all zero and got is not, NaN when either holds NaN where the other does not.
double Sqnr(const at::Tensor& got, const at::Tensor& ref);

// CompareElements: dtype and shape checks, then element-wise statistics at (rtol, atol)
// against `expected` (NaNs equal; rtol scales |actual| as upstream's allclose(expected,
// actual), or |expected| as assert_close(actual, expected) with rtol_scales_expected).
// `reason` is set only when dtype or shape differ; pass is left false for the caller.
TensorComparison CompareElements(const at::Tensor& actual, const at::Tensor& expected,
                                 const at::Tensor& fp64, double rtol, double atol, bool rtol_scales_expected = false);

// CompareOutputs applies the rule to one output: compiled vs eager, with an optional
// float64 reference (pass an undefined tensor when there is none). Both comparisons are
// device-agnostic: the tensors may live on different devices (a CUDA output, a CPU
// reference) and are compared on the CPU.
TensorComparison CompareOutputs(const at::Tensor& compiled, const at::Tensor& eager,
                                const at::Tensor& fp64, const AccuracyOptions& options);

// kUnreliableReference: eager's relative RMSE against float64 above which float64 cannot
// judge an output (bf16's rounding is about 1e-2, fp16's 1e-3, fp32's 1e-7; a random op or
// a sum of cancelling terms is tens of percent).
constexpr double kUnreliableReference = 0.1;

// PassedOnAnUnreliableReference: `c` (CompareOutputs' verdict with `fp64` as reference)
// passed by the float64 RMSE bound, not by allclose, while eager itself is more than
// kUnreliableReference from float64: the bound scales with eager's error, so any compiled
// output of that size would have passed. `relative` gets RMSE(eager, fp64) / RMS(fp64).
bool PassedOnAnUnreliableReference(const TensorComparison& c, const at::Tensor& fp64, double* relative);

// DescribeComparison: the multi-line explanation of a failed (or passed) comparison:
// mismatched elements, greatest absolute and relative differences with their indices,
// got / eager / fp64 at the worst element, and the RMSEs with their bound.
std::string DescribeComparison(const TensorComparison& c, const AccuracyOptions& options);

// FormatIndex: "(2, 3)" for a multi-dimensional index.
std::string FormatIndex(const std::vector<int64_t>& index);

}  // namespace aoti
