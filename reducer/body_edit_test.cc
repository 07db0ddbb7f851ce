// Edits inside a higher-order op's body (reducer/body_edit.h) on the corpus's control flow:
// each edited program runs in the interpreter on the values the recorded run gives its new
// inputs, computes what the body's kept nodes compute, and is written as a candidate archive
// (for Python's loader: $TEST_UNDECLARED_OUTPUTS_DIR/<test>.pt2).
#include "reducer/body_edit.h"

#include <cstdlib>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/program/interpreter.h"
#include "harness/program/program_state.h"
#include "harness/archive/pt2_archive.h"
#include "reducer/candidate_archive.h"
#include "reducer/graph_edit.h"

namespace aoti {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;

struct Recorded {
  std::unique_ptr<Pt2Archive> archive;
  Program program;
  std::map<std::string, at::Tensor> values;  // by name (a subgraph's by its address as a name)
};

Recorded Record(const std::string& name) {
  Recorded r;
  r.archive = Pt2Archive::Open("testdata/corpus/" + name + ".pt2");
  r.program = Program::Parse(r.archive->ProgramJson("model"), name);
  Interpreter eager(r.program, LoadProgramState(*r.archive, "model"));
  RunOptions all;
  all.observer = [&](const Node&, const std::string& address, const c10::IValue& v) {
    if (v.isTensor()) r.values.emplace(AddressAsName(address), v.toTensor());
  };
  const auto inputs = r.archive->SampleInputs();
  const auto names = UserInputNames(r.program);
  for (size_t i = 0; i < names.size(); ++i) r.values.emplace(names[i], inputs[i]);
  const RunResult run = eager.Run(inputs, all);
  r.program.observed_control_flow = run.control_flow;
  return r;
}

// RunEdited: the edited program on the recorded values of its inputs; also written as a candidate.
std::vector<at::Tensor> RunEdited(const Recorded& r, const Program& p, const std::string& test) {
  std::vector<at::Tensor> inputs;
  for (const auto& name : UserInputNames(p)) {
    auto it = r.values.find(name);
    if (it == r.values.end()) ADD_FAILURE() << "no recorded value for input '" << name << "'";
    inputs.push_back(it == r.values.end() ? at::Tensor() : it->second);
  }
  if (const char* out = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    WriteCandidateArchive(*r.archive, "model", p, inputs, "{}", std::string(out) + "/" + test + ".pt2");
  }
  return Interpreter(p, LoadProgramState(*r.archive, "model")).RunTensors(inputs);
}

size_t HopIndex(const Program& p, const std::string& op) {
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    if (HigherOrderName(p.nodes[i]) == op) return i;
  }
  ADD_FAILURE() << "no " << op;
  return 0;
}

TEST(BodyEdit, TheBranchTakenIsTheBodyAndTheOtherOneIsEmptied) {
  const Recorded r = Record("cond_symbolic");
  const size_t hop = HopIndex(r.program, "cond");
  const auto body = BodyToReduce(r.program, hop);
  ASSERT_TRUE(body);
  EXPECT_EQ(body->address, "cond/false_graph_0");  // 3 rows: the short branch
  const Program emptied = EmptyUntakenBranch(r.program, hop, *body);
  const Graph other = ParseSubgraph(emptied.nodes[HopIndex(emptied, "cond")], SubgraphArgs(emptied.nodes[hop])[0], "t");
  ASSERT_EQ(other.nodes.size(), 1u);
  EXPECT_EQ(other.nodes[0].target, "torch.ops.aten.clone.default");
  const auto got = RunEdited(r, emptied, "emptied");
  const auto want = Interpreter(r.program, LoadProgramState(*r.archive, "model")).RunTensors(r.archive->SampleInputs());
  ASSERT_EQ(got.size(), want.size());
  EXPECT_TRUE(at::equal(got[0], want[0]));
}

TEST(BodyEdit, ACondsResultsBecomeWhatItsLastKeptNodeMakes) {
  const Recorded r = Record("cond_symbolic");
  // Its results are read by a later node: the change is refused there.
  const size_t at_first = HopIndex(r.program, "cond");
  const auto first = BodyToReduce(r.program, at_first);
  ASSERT_TRUE(first);
  EXPECT_THROW(KeepBodyNodes(r.program, at_first, *first, {false, true}, BodyOutputs::kLast), EditRefused);
  // The program up to the cond (it computes its predicate from the input's size).
  std::vector<bool> upto(r.program.nodes.size(), false);
  for (size_t i = 0; i <= at_first; ++i) upto[i] = true;
  const Program upto_cond = KeepNodes(r.program, upto, OutputMode::kLast);
  const size_t hop = HopIndex(upto_cond, "cond");
  const auto body = BodyToReduce(upto_cond, hop);
  ASSERT_TRUE(body);
  // The branch is linear, relu: keep the relu alone, its input passed in.
  ASSERT_EQ(body->graph.nodes.size(), 2u);
  const Program p = KeepBodyNodes(upto_cond, hop, *body, {false, true}, BodyOutputs::kLast);
  const size_t at = HopIndex(p, "cond");
  EXPECT_THAT(OperatorNames(p), Contains("aten.relu.default"));
  EXPECT_EQ(OperatorOf(p.nodes[at]), "aten.relu.default");
  const auto got = RunEdited(r, p, "cond_last");
  ASSERT_GE(got.size(), 1u);
  EXPECT_TRUE(at::equal(got[0], r.values.at("cond_false_graph_0_relu")));
}

TEST(BodyEdit, ALoopKeepsWhatItsConditionReadsAndItsOutputs) {
  const Recorded r = Record("while_loop_layer");
  const size_t hop = HopIndex(r.program, "while_loop");
  const auto body = BodyToReduce(r.program, hop);
  ASSERT_TRUE(body);
  const auto kept = KeptForTermination(r.program, hop, *body);
  // The counter's add: the condition reads i.
  ASSERT_EQ(kept.size(), body->graph.nodes.size());
  EXPECT_TRUE(kept[0]) << body->graph.nodes[0].target;
  std::vector<bool> keep(kept.size(), false);
  keep[0] = true;   // the counter
  keep[2] = true;   // tanh (linear cut: passed in)
  const Program p = KeepBodyNodes(r.program, hop, *body, keep);
  const auto got = RunEdited(r, p, "loop_preserve");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].item<int64_t>(), 3) << "the loop did not run its three iterations";
  EXPECT_THROW(KeepBodyNodes(r.program, hop, *body, keep, BodyOutputs::kLast), EditRefused);
}

// A loop's body returns what it carries: a node's value matters only through the nodes it
// flows into. In the loop layer's body, linear flows into tanh, and the counter's add is
// apart; cut off tanh, it flows nowhere.
TEST(BodyEdit, WhatANodesValueFlowsIntoAndWhatABodyReturns) {
  const Recorded r = Record("while_loop_layer");
  const size_t hop = HopIndex(r.program, "while_loop");
  const auto body = BodyToReduce(r.program, hop);
  ASSERT_TRUE(body);
  ASSERT_GE(body->graph.nodes.size(), 3u);
  EXPECT_EQ(ShortTarget(body->graph.nodes[1].target), "aten.linear.default");
  const std::vector<bool> flows = FlowsFrom(body->graph, 1);
  EXPECT_FALSE(flows[0]) << "the counter does not read the linear";
  EXPECT_TRUE(flows[1]);
  EXPECT_TRUE(flows[2]) << body->graph.nodes[2].target << " reads the linear";
  std::vector<bool> through(body->graph.nodes.size(), true);
  through[2] = false;
  const std::vector<bool> cut = FlowsFrom(body->graph, 1, through);
  for (size_t j = 2; j < cut.size(); ++j) EXPECT_FALSE(cut[j]) << "node " << j << " with tanh cut off";
  EXPECT_EQ(BodyOutputsOf(r.program.nodes[hop]), BodyOutputs::kPreserve);
  const Recorded c = Record("cond_branches");
  EXPECT_EQ(BodyOutputsOf(c.program.nodes[HopIndex(c.program, "cond")]), BodyOutputs::kLast);
}

}  // namespace
}  // namespace aoti
