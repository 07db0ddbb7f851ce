// Graph edits and the value store on programs with in-place ops: dead-code elimination keeps
// nodes that write a value read later, and the store keeps each value as its node made it.
#include "reducer/graph_edit.h"

#include <set>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "harness/interpreter.h"
#include "harness/program_state.h"
#include "harness/pt2_archive.h"
#include "harness/temp_dir.h"
#include "reducer/value_store.h"

namespace aoti {
namespace {

std::string Corpus(const std::string& name) { return "testdata/corpus/" + name + ".pt2"; }

TEST(EliminateDeadCode, KeepsInPlaceNodesWhoseWritesAreRead) {
  for (const char* name : {"inplace_ops", "inplace_chain", "input_mutation", "tied_buffer_mutation"}) {
    SCOPED_TRACE(name);
    auto archive = Pt2Archive::Open(Corpus(name));
    const Program original = Program::Parse(archive->ProgramJson("model"), name);
    const Program cleaned = EliminateDeadCode(original);
    EXPECT_EQ(cleaned.nodes.size(), original.nodes.size()) << "a side-effecting node was dropped";
    Interpreter interp(cleaned, LoadProgramState(*archive, "model"));
    const auto got = interp.RunTensors(archive->SampleInputs());
    const auto expected = archive->RecordedEagerOutputs();
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(at::equal(got[i], expected[i])) << "output " << i;
  }
}

TEST(MutatedValueNames, ReadsTheSchemasWriteAliases) {
  auto archive = Pt2Archive::Open(Corpus("inplace_chain"));
  const Program p = Program::Parse(archive->ProgramJson("model"), "inplace_chain");
  int writers = 0;
  for (const auto& n : p.nodes) {
    const auto written = MutatedValueNames(n);
    const bool in_place = n.target.find("_.") != std::string::npos;
    EXPECT_EQ(!written.empty(), in_place) << n.target;
    writers += !written.empty();
  }
  EXPECT_EQ(writers, 3);  // relu_, mul_, add_
}

// The values a cut edge gets: what each node produced, not what later in-place nodes left.
TEST(ValueStore, KeepsEachValueAsItsNodeMadeIt) {
  auto archive = Pt2Archive::Open(Corpus("inplace_chain"));
  auto interp = Interpreter::FromArchive(*archive, "model");
  ValueStore memory;
  TempDir offload("value_store_test");
  ValueStore disk(offload.path());
  RunOptions options;
  options.observer = [&](const Node&, const std::string& name, const c10::IValue& v) {
    if (!v.isTensor()) return;
    memory.Put(name, v.toTensor());
    disk.Put(name, v.toTensor());
  };
  interp->Run(archive->SampleInputs(), options);
  const at::Tensor linear = memory.Get("linear");
  EXPECT_TRUE(at::equal(linear, disk.Get("linear"))) << "memory and offload modes disagree";
  // relu_ ran on linear after it was stored: the stored value still has negatives.
  EXPECT_TRUE((linear < 0).any().item<bool>());
}

// localize_first pairs the compiled values with their names: a buffer mutation's output
// spec (torch.export puts them before the user outputs) must not take a compiled value.
TEST(UserOutputsByName, SkipsBufferMutationsBeforeTheUserOutputs) {
  auto spec = [](OutputKind kind, const std::string& name) {
    OutputSpecEntry e;
    e.kind = kind;
    e.value_name = name;
    e.arg = nlohmann::json{{"as_tensor", {{"name", name}}}};
    return e;
  };
  Program p;
  p.output_specs = {spec(OutputKind::kBufferMutation, "running_mean_new"), spec(OutputKind::kBufferMutation, "steps_new"),
                    spec(OutputKind::kUserOutput, "sub"), spec(OutputKind::kUserOutput, "mul_1"),
                    spec(OutputKind::kUserInputMutation, "x_new"), spec(OutputKind::kUserOutput, "relu")};
  // What the compiled model returns: the user outputs only, each telling its position.
  const std::vector<at::Tensor> compiled = {at::full({1}, 0.0), at::full({1}, 1.0), at::full({1}, 2.0)};
  const auto by_name = UserOutputsByName(p, compiled);
  ASSERT_EQ(by_name.size(), 3u);
  EXPECT_EQ(by_name.at("sub").item<double>(), 0.0);
  EXPECT_EQ(by_name.at("mul_1").item<double>(), 1.0);
  EXPECT_EQ(by_name.at("relu").item<double>(), 2.0);
  EXPECT_EQ(by_name.count("running_mean_new"), 0u);
  // Fewer compiled outputs than user outputs: the ones there are, no more.
  EXPECT_EQ(UserOutputsByName(p, {compiled[0]}).size(), 1u);
}

// Exposing intermediates keeps the program's own outputs first and adds every floating
// value, each once.
TEST(ExposeIntermediates, ReturnsEveryFloatingValueAfterTheOutputs) {
  auto archive = Pt2Archive::Open(Corpus("inplace_chain"));
  const Program original = Program::Parse(archive->ProgramJson("model"), "inplace_chain");
  const Program exposed = ExposeIntermediates(original);
  ASSERT_GE(exposed.output_specs.size(), original.output_specs.size());
  for (size_t i = 0; i < original.output_specs.size(); ++i) {
    EXPECT_EQ(exposed.output_specs[i].value_name, original.output_specs[i].value_name);
  }
  std::set<std::string> seen;
  for (const auto& s : exposed.output_specs) EXPECT_TRUE(seen.insert(s.value_name).second) << s.value_name;
  EXPECT_GT(exposed.output_specs.size(), original.output_specs.size());
}

}  // namespace
}  // namespace aoti
