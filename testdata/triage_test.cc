// Triage, each diagnosis that can arise on a CPU triggered for real through
// EXPECT_AOTI_MATCHES_EAGER's path (AotiMatchesEager with a report): a wrong device in the
// package's metadata, inputs on another device, shape and dtype mismatches and a dynamic
// dimension out of range, an illegal instruction, a kernel that makes NaN, a compile
// error, accuracy drift, a custom op's meta function that breaks a dynamic-shape export,
// and a bare .so from the deprecated aot_compile. Each asserts the
// diagnosis id and its key words; the CUDA-only ones are tested from recorded error text
// in //harness/triage:triage_unit_test.
#include <cstdlib>
#include <string>

#include <ATen/ATen.h>
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plugin/check_flags.h"
#include "harness/archive/archive_rewrite.h"
#include "plugin/flags.h"
#include "harness/archive/pt2_archive.h"
#include "harness/triage/triage.h"
#include "matchers/aoti_matches_eager.h"

DEFINE_string(relu_accuracy, "", "mlp with cpp.inject_relu_bug_TESTING_ONLY=accuracy");
DEFINE_string(relu_compile_error, "", "mlp with cpp.inject_relu_bug_TESTING_ONLY=compile_error");
DEFINE_string(crash_op, "", "a model with the aoti_test::null_deref custom op");
DEFINE_string(dynamic_batch, "", "a model with a dynamic batch in [2, 64]");
DEFINE_string(deprecated_so, "", "a bare .so from torch._export.aot_compile");
DEFINE_string(bad_meta_op, "", "a package whose export failed: a custom op's meta function and a dynamic batch");
DEFINE_string(python_only_op, "", "a package whose program calls a custom op written only in Python");

namespace aoti {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// The check as a test makes it, with its triage; the failure it adds to this test is
// expected (and swallowed).
CheckReport Triaged(const std::string& package, const std::vector<at::Tensor>* inputs = nullptr,
                    CheckOptions options = CheckOptionsFromFlags()) {
  CheckReport report;
  const ::testing::AssertionResult result = AotiMatchesEager(package, inputs, options, &report);
  EXPECT_FALSE(result) << "the check passed; expected a failure to triage";
  EXPECT_FALSE(report.diagnoses.empty()) << report.failure_class << ": " << report.message;
  return report;
}

const Diagnosis& First(const CheckReport& r) {
  static const Diagnosis none;
  return r.diagnoses.empty() ? none : r.diagnoses.front();
}

// A copy of `package` whose AOTI metadata says it was compiled for `device`.
std::string WithDevice(const std::string& package, const std::string& device) {
  auto archive = Pt2Archive::Open(package);
  const std::string copy = std::string(std::getenv("TEST_TMPDIR")) + "/compiled_for_" + device + ".pt2";
  RewriteArchive(*archive, copy, [&](const std::string& rec, std::string* data) {
    if (rec.size() > 14 && rec.compare(rec.size() - 14, 14, "_metadata.json") == 0) {
      nlohmann::json j = nlohmann::json::parse(*data);
      j["AOTI_DEVICE_KEY"] = device;
      *data = j.dump();
    }
    return true;
  });
  return copy;
}

TEST(Triage, AWrongDeviceInTheMetadataIsADeviceMismatch) {
  const CheckReport r = Triaged(WithDevice(FLAGS_aoti_package, "cuda"));
  EXPECT_EQ(r.failure_class, "preflight");
  EXPECT_EQ(First(r).id, "device_mismatch");
  EXPECT_THAT(Joined(First(r).evidence), AllOf(HasSubstr("compiled for cuda"), HasSubstr("no CUDA device")));
  EXPECT_THAT(Joined(First(r).next_steps), HasSubstr("only the device index may differ"));
  EXPECT_THAT(r.diagnosis_markdown, AllOf(HasSubstr("# AOTI diagnosis"), HasSubstr("(`device_mismatch`)"),
                                          HasSubstr("| `AOTI_RUNTIME_CHECK_INPUTS=1` | run time |"),
                                          HasSubstr("| `TORCHINDUCTOR_NAN_ASSERTS=1` | compile time |")));
}

TEST(Triage, InputsOnAnotherDeviceAreADeviceMismatch) {
  const std::vector<at::Tensor> in = {at::empty({8, 32}, at::TensorOptions().device(at::kMeta))};
  const CheckReport r = Triaged(FLAGS_aoti_package, &in);
  EXPECT_EQ(First(r).id, "device_mismatch");
  EXPECT_THAT(Joined(First(r).evidence), HasSubstr("input 0 'x': is on meta, expected cpu"));
}

TEST(Triage, AWrongShapeOrDtypeIsAShapeDtypeMismatch) {
  const std::vector<at::Tensor> shape = {at::randn({4, 32})};
  const CheckReport s = Triaged(FLAGS_aoti_package, &shape);
  EXPECT_EQ(First(s).id, "shape_dtype_mismatch");
  EXPECT_THAT(Joined(First(s).evidence), AllOf(HasSubstr("has shape [4, 32], expected [8, 32]"),
                                               HasSubstr("given input 0: float32[4, 32] on cpu")));
  const std::vector<at::Tensor> dtype = {at::randn({8, 32}, at::kDouble)};
  const CheckReport d = Triaged(FLAGS_aoti_package, &dtype);
  EXPECT_EQ(First(d).id, "shape_dtype_mismatch");
  EXPECT_THAT(Joined(First(d).evidence), HasSubstr("has dtype float64, expected float32"));
}

TEST(Triage, ADynamicDimensionOutOfRangeSaysToWidenIt) {
  const std::vector<at::Tensor> in = {at::randn({100, 12})};  // batch in [2, 64]
  const CheckReport r = Triaged(FLAGS_dynamic_batch, &in);
  EXPECT_EQ(First(r).id, "shape_dtype_mismatch");
  EXPECT_THAT(Joined(First(r).evidence), HasSubstr("outside the exported range [2, 64]"));
  EXPECT_THAT(Joined(First(r).next_steps), HasSubstr("widen the Dim's min/max"));
}

TEST(Triage, AnIllegalInstructionIsTriagedWithTheISAAndTheCustomOp) {
  CheckOptions options = CheckOptionsFromFlags();
  options.runner.env.emplace_back("AOTI_TEST_ILLEGAL_INSTRUCTION", "1");  // the child only
  const CheckReport r = Triaged(FLAGS_crash_op, nullptr, options);
  EXPECT_EQ(r.failure_class, "signal SIGILL") << r.message;
  EXPECT_EQ(First(r).id, "cpu_isa_mismatch");
  const std::string evidence = Joined(First(r).evidence);
  EXPECT_THAT(evidence, AllOf(HasSubstr("died of SIGILL"), HasSubstr("this host has"),
                              HasSubstr("a custom-op library is loaded")));
  EXPECT_THAT(Joined(First(r).next_steps), HasSubstr("cpp.simdlen"));
  // The debug re-run with the run-time input checks was made, and it says what happened.
  EXPECT_THAT(r.diagnosis_markdown, HasSubstr("debug re-run with AOTI_RUNTIME_CHECK_INPUTS=1 (run time, this child only): "
                                              "failed the same way"));
}

TEST(Triage, AKernelThatMakesNanIsNamedAsSuch) {
  CheckOptions options = CheckOptionsFromFlags();
  options.runner.env.emplace_back("AOTI_TEST_NAN", "1");  // the compiled run's custom op makes NaN; eager's does not
  const CheckReport r = Triaged(FLAGS_crash_op, nullptr, options);
  EXPECT_EQ(r.failure_class, "accuracy") << r.message;
  EXPECT_EQ(First(r).id, "nan_inf");
  const std::string evidence = Joined(First(r).evidence);
  EXPECT_THAT(evidence, AllOf(HasSubstr("the compiled model made 32 NaN and 0 Inf of 32 elements; eager made 0 NaN"),
                              HasSubstr("every input is finite"),
                              HasSubstr("debug re-run with AOTI_RUNTIME_CHECK_INPUTS=1")));
  EXPECT_THAT(Joined(First(r).next_steps), HasSubstr("TORCHINDUCTOR_NAN_ASSERTS=1"));
  // Drift is not listed again beside it.
  for (const auto& d : r.diagnoses) EXPECT_NE(d.id, "accuracy_drift");
}

TEST(Triage, ACompileErrorShowsTheFailingLine) {
  const CheckReport r = Triaged(FLAGS_relu_compile_error);
  EXPECT_EQ(First(r).id, "compile_error");
  const std::string evidence = Joined(First(r).evidence);
  EXPECT_THAT(evidence, AllOf(HasSubstr(".kernel.cpp:"), HasSubstr(": error: "), HasSubstr("the failing line: "),
                              HasSubstr("compile error!;")));
  EXPECT_THAT(Joined(First(r).next_steps), HasSubstr("DUMP_AOTI_MINIFIER=1"));
}

TEST(Triage, AccuracyDriftNamesTheOutputAndHowToFindTheNode) {
  const CheckReport r = Triaged(FLAGS_relu_accuracy);
  EXPECT_EQ(First(r).id, "accuracy_drift");
  EXPECT_THAT(Joined(First(r).evidence), AllOf(HasSubstr("output 0 'log_softmax' (float32[8, 10])"),
                                               HasSubstr("RMSE(compiled, fp64)")));
  EXPECT_THAT(Joined(First(r).next_steps), HasSubstr("localize_first names the first divergent node"));
  // The failure message carries the one-paragraph summary.
  EXPECT_NONFATAL_FAILURE(EXPECT_AOTI_MATCHES_EAGER(FLAGS_relu_accuracy), "Diagnosis accuracy_drift: ");
}

TEST(Triage, ABareSharedObjectIsTheDeprecatedApi) {
  const CheckReport r = Triaged(FLAGS_deprecated_so);
  EXPECT_EQ(First(r).id, "deprecated_aot_compile");
  EXPECT_THAT(Joined(First(r).evidence), HasSubstr("is a bare shared object (an ELF file)"));
  EXPECT_THAT(Joined(First(r).next_steps), AllOf(HasSubstr("aoti_compile_and_package"), HasSubstr("aoti_load_package")));
}

TEST(Triage, ACustomOpMetaFunctionThatBreaksADynamicExport) {
  const CheckReport r = Triaged(FLAGS_bad_meta_op);
  EXPECT_EQ(r.failure_class, "export error") << r.message;
  EXPECT_EQ(First(r).id, "custom_op_symint_meta");
  EXPECT_THAT(Joined(First(r).evidence), AllOf(HasSubstr("the dynamic dimension 'batch' was specialised to 4"),
                                               HasSubstr("x.sym_sizes()"), HasSubstr("test_ops_for_python.so")));
  EXPECT_THAT(Joined(First(r).next_steps), AllOf(HasSubstr("sym_sizes()"), HasSubstr("TORCH_LOGS=\"+dynamic\"")));
  // The generic export diagnosis is not listed again beside it.
  for (const auto& d : r.diagnoses) EXPECT_NE(d.id, "export_error");
}

// A custom operator written only in Python (torch.library.custom_op): the compiled model calls
// it back into Python, which no C++ process can do. Said before anything runs, naming the
// operator and the file that defines it, never as a missing library.
TEST(Triage, AnOperatorWrittenOnlyInPythonIsNamedBeforeAnythingRuns) {
  const CheckReport r = Triaged(FLAGS_python_only_op);
  EXPECT_EQ(r.failure_class, "not supported") << r.message;
  EXPECT_THAT(r.message, AllOf(HasSubstr("'corpus_py::soft_clip.default' (1 node; Python defines it at "),
                               HasSubstr("python_only_op.py:"), HasSubstr("calls it back into Python"),
                               HasSubstr("a C++ deployment of this package fails at that call"),
                               HasSubstr("Checked before anything ran")));
  EXPECT_THAT(r.message, ::testing::Not(HasSubstr("give the shared library")));
  EXPECT_EQ(First(r).id, "python_only_op");
  EXPECT_THAT(Joined(First(r).evidence),
              AllOf(HasSubstr("corpus_py::soft_clip.default (1 node): defined in Python, no C++ kernel"),
                    HasSubstr("a C++ deployment of this package fails at that call")));
  EXPECT_THAT(Joined(First(r).next_steps), AllOf(HasSubstr("TORCH_LIBRARY_IMPL"), HasSubstr("op_libraries")));
  // The operator is no transformers one: transformers' fix is not offered.
  EXPECT_THAT(Joined(First(r).next_steps), ::testing::Not(HasSubstr("batched_mm")));
  // The generic "not supported" diagnosis is not listed beside it.
  for (const auto& d : r.diagnoses) EXPECT_NE(d.id, "not_supported");
}

TEST(Triage, AHealthyModelGetsNoDiagnosis) {
  CheckReport report;
  EXPECT_TRUE(AotiMatchesEager(FLAGS_aoti_package, nullptr, CheckOptionsFromFlags(), &report)) << report.message;
  EXPECT_THAT(report.diagnoses, IsEmpty());
  EXPECT_TRUE(Triage(GatherEvidence(FLAGS_aoti_package, nullptr, report, CheckOptionsFromFlags())).empty());
}

}  // namespace
}  // namespace aoti
