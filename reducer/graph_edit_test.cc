// Graph edits and the value store on programs with in-place ops: dead-code elimination keeps
// nodes that write a value read later, and the store keeps each value as its node made it.
#include "reducer/graph_edit.h"

#include <map>
#include <set>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/program/interpreter.h"
#include "harness/program/program_state.h"
#include "harness/archive/pt2_archive.h"
#include "harness/util/temp_dir.h"
#include "reducer/artifacts.h"
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

// Every tensor value of one run of `program`, by name.
std::map<std::string, at::Tensor> AllValues(const Program& program, const Pt2Archive& archive,
                                            const std::vector<at::Tensor>& inputs) {
  std::map<std::string, at::Tensor> values;
  const auto names = UserInputNames(program);
  for (size_t i = 0; i < names.size(); ++i) values[names[i]] = inputs[i];
  RunOptions keep;
  keep.observer = [&](const Node&, const std::string& name, const c10::IValue& v) {
    if (v.isTensor()) values[name] = v.toTensor().clone();
  };
  Interpreter(program, LoadProgramState(archive, "model")).Run(inputs, keep);
  return values;
}

// A cut at a symbolic int (x.shape[0] read by a later mul): the symbol is read again off a
// cut input with that dimension, so the candidate stays dynamic and gives the original's
// values at another batch size too.
TEST(KeepNodes, ACutSymbolIsReadOffAnInputWithThatDimension) {
  auto archive = Pt2Archive::Open(Corpus("dynamic_batch"));
  const Program original = Program::Parse(archive->ProgramJson("model"), "dynamic_batch");
  ASSERT_EQ(original.nodes.back().target, "torch.ops.aten.mul.Tensor");
  std::vector<bool> keep(original.nodes.size(), false);
  keep.back() = true;  // mul(softmax, sym_size_int_1): the sym_size node is cut away
  const Program cut = KeepNodes(original, keep, OutputMode::kPreserve);
  ASSERT_EQ(cut.nodes.size(), 2u) << FormatGraph(cut);
  EXPECT_EQ(cut.nodes[0].target, "torch.ops.aten.sym_size.int");
  EXPECT_EQ(cut.nodes[0].inputs[0].arg["as_tensor"]["name"], "softmax");
  EXPECT_EQ(UserInputNames(cut), std::vector<std::string>{"softmax"});
  const auto notes = DynamicShapeNotes(original, cut);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "kept dynamic: input 'softmax' dimension 0 is s77 in [2, 64]");
  // The edited program round-trips through its JSON and runs at batch 8 and at batch 5.
  const Program reparsed = Program::Parse(cut.ToJson(), "cut");
  for (int64_t batch : {8, 5}) {
    const auto values = AllValues(original, *archive, {at::randn({batch, 12})});
    Interpreter interp(reparsed, LoadProgramState(*archive, "model"));
    const auto got = interp.RunTensors({values.at("softmax")});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(at::allclose(got[0], values.at("mul"))) << "batch " << batch;
  }
}

// A symbolic int that no input dimension carries (an expression of two symbols sizing a
// new tensor) is specialised to the value export observed, and the report says so.
TEST(KeepNodes, ASymbolNoInputCarriesIsSpecialisedToItsObservedValue) {
  auto archive = Pt2Archive::Open(Corpus("sym_ops"));
  const Program original = Program::Parse(archive->ProgramJson("model"), "sym_ops");
  std::vector<bool> keep(original.nodes.size(), false);
  for (size_t i = 0; i < original.nodes.size(); ++i) {
    const std::string& t = original.nodes[i].target;
    keep[i] = t == "torch.ops.aten.ones.default" || t == "torch.ops.aten.sum.default" || t == "torch.ops.aten.mul.Tensor";
  }
  const Program cut = KeepNodes(original, keep, OutputMode::kFrontier);  // mul, read by the removed add, returned
  EXPECT_EQ(OperatorNames(cut), (std::vector<std::string>{"aten.ones.default", "aten.sum.default", "aten.mul.Tensor"}));
  const auto& size = cut.nodes[0].inputs[0].arg["as_sym_ints"];
  ASSERT_TRUE(size.is_array());
  EXPECT_EQ(size[0], (nlohmann::json{{"as_int", 14}}));  // max(4, 6) + min(4, 6) + 4
  const auto notes = DynamicShapeNotes(original, cut);
  EXPECT_THAT(notes, ::testing::Contains("specialised: 'add_1' is 14 (the value export observed) in node 'ones'"));
  EXPECT_THAT(notes, ::testing::Contains("kept dynamic: input 'x' dimension 0 is s77 in [2, 64]"));
  const auto values = AllValues(original, *archive, archive->SampleInputs());
  const auto got = Interpreter(Program::Parse(cut.ToJson(), "cut"), LoadProgramState(*archive, "model"))
                       .RunTensors({values.at("x")});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(at::allclose(got[0], values.at("mul")));
}

// A symbolic bool cannot be cut: refused, and the strategy tries another edit.
TEST(KeepNodes, ACutSymbolicBoolIsRefused) {
  auto archive = Pt2Archive::Open(Corpus("sym_ops"));
  const Program original = Program::Parse(archive->ProgramJson("model"), "sym_ops");
  std::vector<bool> keep(original.nodes.size(), true);
  for (size_t i = 0; i < original.nodes.size(); ++i) {
    if (original.nodes[i].target == "_operator.and_") keep[i] = false;
  }
  EXPECT_THROW(KeepNodes(original, keep, OutputMode::kPreserve), EditRefused);
}

}  // namespace
}  // namespace aoti
