// Graph edits and the value store on programs with in-place ops: dead-code elimination keeps
// nodes that write a value read later, and the store keeps each value as its node made it.
#include "reducer/graph_edit.h"

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

}  // namespace
}  // namespace aoti
