// The kernel map on what the generated code really says: g++'s output for the planted
// compile error (as the wheel's compile produced it), AOTI's kernel-name printer output
// around a crash, and kernel names mapped onto corpus programs.
#include "reducer/kernel_map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/archive/pt2_archive.h"
#include "reducer/graph_edit.h"

namespace aoti {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

Program Corpus(const std::string& name) {
  auto archive = Pt2Archive::Open("testdata/corpus/" + name + ".pt2");
  return Program::Parse(archive->ProgramJson("model"), name);
}

// The compile error the wheel's g++ printed for cpp.inject_relu_bug_TESTING_ONLY =
// "compile_error" (paths shortened), in a UTF-8 locale and in the C locale.
constexpr char kCompilerOutput[] =
    "/tmp/i/c.kernel.cpp: In function \xE2\x80\x98void cpp_fused_relu_1(float*, float*)\xE2\x80\x99:\n"
    "/tmp/i/c.kernel.cpp:15:33: error: \xE2\x80\x98" "compile\xE2\x80\x99 was not declared in this scope\n"
    "   15 |                     auto tmp1 = compile error!;\n"
    "/tmp/i/c.kernel.cpp: In function \xE2\x80\x98void cpp_fused_mul_sigmoid_2(float*)\xE2\x80\x99:\n"
    "/tmp/i/c.kernel.cpp:140:3: error: expected ';'\n";

TEST(KernelPrinterEnv, MakesLaunchesSynchronousOnAGpuOnly) {
  EXPECT_TRUE(KernelPrinterEnv("cpu").empty());
  EXPECT_TRUE(KernelPrinterEnv("").empty());
  const auto cuda = KernelPrinterEnv("cuda");
  ASSERT_EQ(cuda.size(), 1u);
  EXPECT_EQ(cuda[0], (std::pair<std::string, std::string>{"CUDA_LAUNCH_BLOCKING", "1"}));
}

TEST(KernelInCompilerOutput, NamesTheFunctionOfTheFirstError) {
  EXPECT_EQ(KernelInCompilerOutput(kCompilerOutput), "cpp_fused_relu_1");
  EXPECT_EQ(KernelInCompilerOutput("k.cpp: In function 'void cpp_fused_add_0(const float*, float*)':\n"
                                   "k.cpp:3:1: error: boom\n"),
            "cpp_fused_add_0");
  EXPECT_EQ(KernelInCompilerOutput("k.cpp:3:1: error: no function named\n"), "");
}

TEST(KernelThatDidNotFinish, IsTheLastLaunchWithoutItsEnd) {
  // What the printer wrote before the relu kernel threw (the wheel's own output).
  const std::string log =
      "[ before_launch: cpp_fused_0 ]\n[ after_launch: cpp_fused_0 ]\n"
      "[ before_launch: aoti_torch_cpu_addmm_out ]\n[ after_launch: aoti_torch_cpu_addmm_out ]\n"
      "[ before_launch: cpp_fused_relu_1 ]\nUnknown exception occurred.\n";
  EXPECT_EQ(KernelThatDidNotFinish(log), "cpp_fused_relu_1");
  EXPECT_EQ(KernelThatDidNotFinish("[ before_launch: a ]\n[ after_launch: a ]\n"), "");
  EXPECT_EQ(KernelThatDidNotFinish("segfault with nothing printed"), "");
  // Interleaved with what the model itself printed.
  EXPECT_EQ(KernelThatDidNotFinish("x\n[ before_launch: cpp_fused_log1p_3 ]\nnoise [ before_launch: k ] "
                                   "[ after_launch: k ]\n"),
            "cpp_fused_log1p_3");
}

TEST(LastFinishedKernel, IsTheLastAfterLaunch) {
  EXPECT_EQ(LastFinishedKernel("[ before_launch: a ]\n[ after_launch: a ]\n[ before_launch: b ]\n"
                               "[ after_launch: b ]\nSegmentation fault\n"),
            "b");
  EXPECT_EQ(LastFinishedKernel("[ before_launch: a ]\n"), "");
}

TEST(UnprintedCallNodes, AreTheCallsOutsideAtenAndPrims) {
  EXPECT_THAT(UnprintedCallNodes(Corpus("mlp")), IsEmpty());
}

TEST(KernelOperators, StripsPrefixAndSuffix) {
  EXPECT_EQ(KernelOperators("cpp_fused_mul_sigmoid_2"), "mul_sigmoid");
  EXPECT_EQ(KernelOperators("triton_poi_fused_add_relu_0"), "add_relu");
  EXPECT_EQ(KernelOperators("cpp_fused__log_softmax_4"), "_log_softmax");
  EXPECT_EQ(KernelOperators("aoti_torch_cpu_addmm_out"), "addmm");
  EXPECT_EQ(KernelOperators("aoti_torch_cuda_convolution"), "convolution");
}

std::vector<std::string> Targets(const Program& p, const std::vector<size_t>& nodes) {
  std::vector<std::string> out;
  for (size_t i : nodes) out.push_back(ShortTarget(p.nodes[i].target));
  return out;
}

TEST(NodesForKernel, MapsKernelNamesToTheirNodes) {
  const Program mlp = Corpus("mlp");  // linear relu linear relu linear log_softmax
  EXPECT_THAT(NodesForKernel(mlp, "cpp_fused_relu_1"), ElementsAre(1, 3));
  EXPECT_THAT(Targets(mlp, NodesForKernel(mlp, "aoti_torch_cpu_addmm_out")),
              ElementsAre("aten.linear.default", "aten.linear.default", "aten.linear.default"));
  EXPECT_THAT(Targets(mlp, NodesForKernel(mlp, "cpp_fused__log_softmax_5")), ElementsAre("aten.log_softmax.int"));
  EXPECT_THAT(NodesForKernel(mlp, "cpp_fused_0"), IsEmpty());
  // Whole words only: "relu" does not name a node of a kernel called after "leaky_relux".
  EXPECT_THAT(NodesForKernel(mlp, "cpp_fused_leaky_relux_0"), IsEmpty());
  const Program convbn = Corpus("convbn");
  EXPECT_THAT(Targets(convbn, NodesForKernel(convbn, "cpp_fused__native_batch_norm_legit_no_training_relu_1")),
              ElementsAre("aten.batch_norm.default", "aten.relu.default", "aten.batch_norm.default",
                          "aten.relu.default"));
  const Program block = Corpus("residual_block");
  EXPECT_THAT(Targets(block, NodesForKernel(block, "cpp_fused_gelu_7")), ElementsAre("aten.gelu.default"));
}

TEST(FinishedLaunches, CountsTheLaunchesOfAKernelThatFinished) {
  const std::string log =
      "[ before_launch: aoti_torch_cpu_addmm_out ]\n[ after_launch: aoti_torch_cpu_addmm_out ]\n"
      "[ before_launch: cpp__0 ]\n[ after_launch: cpp__0 ]\n"
      "[ before_launch: aoti_torch_cpu_addmm_out ]\n[ after_launch: aoti_torch_cpu_addmm_out ]\n"
      "[ before_launch: cpp__1 ]\n[ after_launch: cpp__1 ]\n[ before_launch: cpp__1 ]\nUnknown exception occurred.\n";
  EXPECT_EQ(KernelThatDidNotFinish(log), "cpp__1");
  EXPECT_EQ(FinishedLaunches(log, "cpp__1"), 1);  // its second call failed
  EXPECT_EQ(FinishedLaunches(log, "aoti_torch_cpu_addmm_out"), 2);
  EXPECT_EQ(FinishedLaunches(log, "cpp__12"), 0);
  EXPECT_THAT(FinishedKernels(log), ElementsAre("aoti_torch_cpu_addmm_out", "cpp__0", "aoti_torch_cpu_addmm_out", "cpp__1"));
}

TEST(KernelNodes, MapsAKernelWithoutANameToItsNodesThroughTheProvenanceRecord) {
  const Program mlp = Corpus("mlp");  // linear relu linear relu linear log_softmax
  const auto name = [&](size_t i) { return nlohmann::json(mlp.nodes[i].name); };
  // As the compile server returns it: kernels named cpp__<n> (cpp.descriptive_names off),
  // one list of the exported graph's nodes per call; a node the program lacks is skipped.
  const nlohmann::json record = {
      {"aoti_torch_cpu_addmm_out", {{name(0)}, {name(2)}, {name(4)}}},
      {"cpp__0", nlohmann::json::array({nlohmann::json::array()})},
      {"cpp__1", {{name(1), "not_in_this_program"}, {name(3)}}},
      {"cpp__2", {{name(5)}}},
  };
  const KernelProvenance provenance = ParseKernelProvenance(record.dump());
  EXPECT_THAT(KernelNodes(mlp, provenance, "cpp__1", 0), ElementsAre(1));
  EXPECT_THAT(KernelNodes(mlp, provenance, "cpp__1", 1), ElementsAre(3));
  EXPECT_THAT(KernelNodes(mlp, provenance, "cpp__1"), ElementsAre(1, 3));     // every call
  EXPECT_THAT(KernelNodes(mlp, provenance, "cpp__1", 7), ElementsAre(1, 3));  // a call it has not: every call
  EXPECT_THAT(KernelNodes(mlp, provenance, "aoti_torch_cpu_addmm_out", 2), ElementsAre(4));
  EXPECT_THAT(KernelNodes(mlp, provenance, "cpp__0"), IsEmpty());
  EXPECT_THAT(KernelNodes(mlp, provenance, "cpp__9"), IsEmpty());
  // The name says nothing: only the record maps it.
  EXPECT_THAT(NodesForKernel(mlp, "cpp__2"), IsEmpty());
  EXPECT_THAT(KernelNodes(mlp, provenance, "cpp__2"), ElementsAre(5));
}

TEST(ParseKernelProvenance, GivesNoRecordForNoneOrAnotherShape) {
  EXPECT_TRUE(ParseKernelProvenance("").empty());
  EXPECT_TRUE(ParseKernelProvenance("{not json").empty());
  EXPECT_TRUE(ParseKernelProvenance(R"({"cpp__0": {"pre_grad_nodes": ["relu"]}})").empty());
  EXPECT_EQ(ParseKernelProvenance(R"({"cpp__0": [["relu"]]})").at("cpp__0").at(0).at(0), "relu");
}

}  // namespace
}  // namespace aoti
