// Triage from recorded error text (testdata/triage/), for the diagnoses a CPU machine
// cannot trigger: a Triton index out of bounds, a CUDA illegal memory access, and a
// custom op's meta function that specialises a dynamic dimension (export fails at
// packaging time, before any check). Also: the table's shape, the summary paragraph, and
// that a passing check gets no diagnosis.
#include "harness/triage/triage.h"

#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace aoti {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string Recorded(const std::string& name) {
  std::ifstream in("testdata/triage/" + name);
  EXPECT_TRUE(in.good()) << name;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

TriageEvidence CudaRunFailure(const std::string& stderr_text) {
  TriageEvidence e;
  e.package = "model.pt2";
  e.failure_class = "signal SIGABRT";
  e.signal = 6;
  e.message = "model.pt2 model 'model': the compiled model died of SIGABRT";
  e.stderr_text = stderr_text;
  e.metadata = {{"AOTI_DEVICE_KEY", "cuda"}};
  e.host.has_cuda = true;
  return e;
}

TEST(TriageFromRecordedText, TritonIndexOutOfBoundsGetsTheIndexingGuide) {
  const auto d = Triage(CudaRunFailure(Recorded("index_out_of_bounds.txt")));
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d[0].id, "index_out_of_bounds");
  EXPECT_THAT(Joined(d[0].evidence), AllOf(HasSubstr("index out of bounds: 0 <= tmp4 < ks0"),
                                           HasSubstr("in kernel triton_poi_fused_embedding_0"),
                                           HasSubstr("ks0 is one of the kernel's symbolic size arguments")));
  EXPECT_THAT(Joined(d[0].next_steps), AllOf(HasSubstr("Map ks0 to the input size"), HasSubstr("lower-bound guard"),
                                             HasSubstr("empty tensor"), HasSubstr("TORCH_LOGS=output_code")));
  for (const auto& other : d) EXPECT_NE(other.id, "crash");  // the specific diagnosis explains the abort
}

TEST(TriageFromRecordedText, AFixedBoundIsNamedAsSuch) {
  TriageEvidence e = CudaRunFailure("Assertion `index out of bounds: 0 <= tmp4 < 32000` failed.");
  const auto d = Triage(e);
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d[0].id, "index_out_of_bounds");
  EXPECT_THAT(Joined(d[0].evidence), HasSubstr("32000 is a size fixed at compile time"));
}

TEST(TriageFromRecordedText, IllegalMemoryAccessGetsTheStagedProcedure) {
  const auto d = Triage(CudaRunFailure(Recorded("illegal_memory_access.txt")));
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d[0].id, "cuda_illegal_memory_access");
  const std::string steps = Joined(d[0].next_steps);
  EXPECT_THAT(steps, AllOf(HasSubstr("1. Sanity"), HasSubstr("--aoti_runtime_check_inputs"),
                           HasSubstr("2. Deterministic re-run"),
                           HasSubstr("CUDA_LAUNCH_BLOCKING=1,PYTORCH_NO_CUDA_MEMORY_CACHING=1"),
                           HasSubstr("3. Name the kernel"), HasSubstr("debug_intermediate_value_printer\": \"3\""),
                           HasSubstr("filtered_kernel_names")));
  EXPECT_THAT(Joined(d[0].evidence), HasSubstr("asynchronously"));
}

TEST(TriageFromRecordedText, NoAdviceToSetDumpAotiMinifierWhenTheReductionAlreadyFollows) {
  TriageEvidence e = CudaRunFailure(Recorded("illegal_memory_access.txt"));
  EXPECT_THAT(Joined(Triage(e)[0].next_steps), HasSubstr("$ DUMP_AOTI_MINIFIER=1 bazel test <this test>"));
  e.reducing = true;  // DUMP_AOTI_MINIFIER=1 is set: the listener reduces when the test ends
  const std::string steps = Joined(Triage(e)[0].next_steps);
  EXPECT_THAT(steps, HasSubstr("The reduction runs when this test ends"));
  EXPECT_THAT(steps, Not(HasSubstr("$ DUMP_AOTI_MINIFIER=1")));
}

TEST(TriageFromRecordedText, ACustomOpMetaThatSpecialisesADynamicDimension) {
  TriageEvidence e;
  e.package = "model.pt2";
  e.failure_class = "export error";
  e.message = Recorded("custom_op_symint_meta.txt");
  e.op_libraries = {"libmy_ops.so"};
  const auto d = Triage(e);
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d[0].id, "custom_op_symint_meta");
  EXPECT_THAT(Joined(d[0].evidence), AllOf(HasSubstr("the dynamic dimension 'batch' was specialised to 8"),
                                           HasSubstr("x.sym_sizes()"), HasSubstr("libmy_ops.so")));
  EXPECT_THAT(Joined(d[0].next_steps), AllOf(HasSubstr("sym_sizes()"), HasSubstr("register_fake"),
                                             HasSubstr("TORCH_LOGS=\"+dynamic\"")));
}

TEST(TriageFromRecordedText, TheOlderSymbolicSizesErrorNamesTheOperator) {
  TriageEvidence e;
  e.failure_class = "export error";
  e.message = "RuntimeError: Cannot call sizes() on tensor with symbolic sizes/strides\n"
              "While executing %sized_like : [num_users=1] = call_function[target=torch.ops.my_ops.sized_like.default]";
  const auto d = Triage(e);
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d[0].id, "custom_op_symint_meta");
  EXPECT_THAT(Joined(d[0].evidence), AllOf(HasSubstr("called sizes()"), HasSubstr("the operator: my_ops::sized_like")));
}

TEST(Triage, APassingCheckGetsNoDiagnosis) {
  TriageEvidence e;  // no failure class
  EXPECT_TRUE(Triage(e).empty());
  EXPECT_EQ(DiagnosisSummary({}), "");
}

TEST(Triage, EveryEntryHasAUniqueIdATitleAndWhatRecognisesIt) {
  std::set<std::string> ids;
  for (const auto& rule : DiagnosisTable()) {
    EXPECT_TRUE(ids.insert(rule.id).second) << rule.id;
    EXPECT_STRNE(rule.title, "");
    EXPECT_STRNE(rule.recognised_by, "");
  }
  EXPECT_GE(ids.size(), 10u);
}

TEST(Triage, TheSummaryIsOneParagraphWithTheIdTheEvidenceAndTheNextStep) {
  const auto d = Triage(CudaRunFailure(Recorded("illegal_memory_access.txt")));
  const std::string s = DiagnosisSummary(d);
  EXPECT_THAT(s, StartsWith("Diagnosis cuda_illegal_memory_access: CUDA illegal memory access."));
  EXPECT_THAT(s, HasSubstr("Next: 1. Sanity"));
  EXPECT_EQ(s.find('\n'), std::string::npos);
}

TEST(Triage, TheSettingsTableSaysWhenTheWheelReadsEach) {
  std::set<std::string> read;
  for (const auto& s : DebugSettings()) read.insert(std::string(s.name) + "=" + s.read);
  EXPECT_TRUE(read.count("AOTI_RUNTIME_CHECK_INPUTS=1=run time"));
  EXPECT_TRUE(read.count("TORCHINDUCTOR_NAN_ASSERTS=1=compile time"));
  EXPECT_TRUE(read.count("CUDA_LAUNCH_BLOCKING=1=run time"));
  EXPECT_TRUE(read.count("PYTORCH_NO_CUDA_MEMORY_CACHING=1=run time"));
}

// The nondeterministic verdict's evidence quotes whole clauses of the check's message: the
// operators with their overloads, and the difference with its decimals (it was cut at the
// first dot: "random operators: randn_like (aten").
TEST(TriageFromRecordedText, ARandomModelsEvidenceIsNotCutMidPhrase) {
  TriageEvidence e;
  e.package = "model.pt2";
  e.failure_class = "nondeterministic";
  e.message = "model.pt2 model 'model': the model is random: it draws random numbers in randn_like "
              "(aten.randn_like.default), dropout (aten.native_dropout.default); two eager runs on the same inputs "
              "differ at output 0 'add' by up to 0.734512. Eager, float64 and the compiled model draw other numbers.";
  const auto d = Triage(e);
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d[0].id, "nondeterministic");
  EXPECT_THAT(Joined(d[0].evidence),
              AllOf(HasSubstr("random operators: randn_like (aten.randn_like.default), dropout "
                              "(aten.native_dropout.default)\n"),
                    HasSubstr("two eager runs on the same inputs differ at output 0 'add' by up to 0.734512\n")));
  EXPECT_THAT(DiagnosisSummary(d), HasSubstr("(aten.randn_like.default), dropout (aten.native_dropout.default)."));
}

}  // namespace
}  // namespace aoti
