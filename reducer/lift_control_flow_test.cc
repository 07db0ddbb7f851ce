// LiftControlFlow on the control-flow programs of the fidelity corpus: the lifted program
// is straight-line (but for one-op autocast regions), every lifted node keeps its address,
// it survives the JSON round trip, runs in the interpreter, and computes what the original
// computed: the same values where only a cond or a region was lifted, the same shapes where
// a loop's first iteration stands for the loop.
#include "reducer/lift_control_flow.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/program/interpreter.h"
#include "harness/program/program_state.h"
#include "harness/archive/pt2_archive.h"
#include "reducer/graph_edit.h"

namespace aoti {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

struct Lifted {
  Program original, lifted;
  LiftedProgram result;
  std::vector<at::Tensor> original_out, lifted_out;
  std::map<std::string, ControlFlowTaken> taken;
};

Lifted Lift(const std::string& name) {
  auto archive = Pt2Archive::Open("testdata/corpus/" + name + ".pt2");
  Lifted l;
  l.original = Program::Parse(archive->ProgramJson("model"), name);
  Interpreter eager(l.original, LoadProgramState(*archive, "model"));
  const RunResult r = eager.Run(archive->SampleInputs());
  for (const auto& v : r.outputs) l.original_out.push_back(v.toTensor());
  l.taken = r.control_flow;
  l.result = LiftControlFlow(l.original, l.taken);
  // Through its JSON, as the compile server gets it.
  l.lifted = Program::Parse(RemoveUnusedInputs(EliminateDeadCode(l.result.program)).ToJson(), name + " lifted");
  std::vector<at::Tensor> inputs;
  const auto all = archive->SampleInputs();
  const auto names = UserInputNames(l.original);
  for (const auto& kept : UserInputNames(l.lifted)) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == kept) inputs.push_back(all[i]);
    }
  }
  l.lifted_out = Interpreter(l.lifted, LoadProgramState(*archive, "model")).RunTensors(inputs);
  return l;
}

// StraightLine: no higher-order op but one-op autocast regions.
void ExpectStraightLine(const Program& p) {
  for (const auto& n : p.nodes) {
    const std::string hop = HigherOrderName(n);
    if (hop.empty()) continue;
    EXPECT_EQ(hop, "wrap_with_autocast") << n.name;
    EXPECT_EQ(CountNodes({n}), 2u) << n.name << ": a region of more than one op";
  }
}

void ExpectSameValues(const Lifted& l) {
  ASSERT_EQ(l.lifted_out.size(), l.original_out.size());
  for (size_t i = 0; i < l.original_out.size(); ++i) {
    EXPECT_TRUE(at::equal(l.lifted_out[i], l.original_out[i])) << "output " << i;
  }
}

void ExpectSameShapes(const Lifted& l) {
  ASSERT_EQ(l.lifted_out.size(), l.original_out.size());
  for (size_t i = 0; i < l.original_out.size(); ++i) {
    EXPECT_EQ(l.lifted_out[i].sizes(), l.original_out[i].sizes()) << "output " << i;
    EXPECT_EQ(l.lifted_out[i].scalar_type(), l.original_out[i].scalar_type()) << "output " << i;
  }
}

std::vector<std::string> Paths(const Program& p) {
  std::vector<std::string> out;
  for (const auto& n : p.nodes) out.push_back(NodePath(n));
  return out;
}

TEST(LiftControlFlow, CondsInlineTheBranchTakenNestedToo) {
  const Lifted l = Lift("cond_branches");
  ExpectStraightLine(l.lifted);
  ExpectSameValues(l);
  EXPECT_EQ(l.result.lifted.size(), 3u) << ::testing::PrintToString(l.result.lifted);  // two conds, one nested
  EXPECT_TRUE(l.result.kept.empty()) << ::testing::PrintToString(l.result.kept);
  // The relu of the outer cond's true branch, by its address.
  EXPECT_THAT(Paths(l.lifted), Contains("cond/true_graph_0/relu"));
  EXPECT_THAT(Paths(l.lifted), Contains(HasSubstr("cond/true_graph_0/cond/")));
  EXPECT_LT(CountNodes(l.lifted.nodes), CountNodes(l.original.nodes));
}

TEST(LiftControlFlow, ASymbolicPredicateIsLiftedToo) {
  const Lifted l = Lift("cond_symbolic");
  ExpectStraightLine(l.lifted);
  ExpectSameValues(l);
}

TEST(LiftControlFlow, AWhileLoopBecomesItsFirstIteration) {
  const Lifted l = Lift("while_loop_layer");
  ASSERT_EQ(l.taken.at("while_loop").iterations, 3);
  ExpectStraightLine(l.lifted);
  ExpectSameShapes(l);
  EXPECT_THAT(l.result.lifted, Contains(HasSubstr("first of 3 iterations")));
  EXPECT_THAT(Paths(l.lifted), Contains("while_loop/while_loop_body_graph_0/tanh"));
  // One iteration: the counter is 1.
  EXPECT_EQ(l.lifted_out.at(1).item<int64_t>(), 1);
}

TEST(LiftControlFlow, MapAndScanBecomeTheirFirstStepStacked) {
  const Lifted l = Lift("map_scan");
  ExpectStraightLine(l.lifted);
  ExpectSameShapes(l);
  EXPECT_EQ(l.result.lifted.size(), 2u) << ::testing::PrintToString(l.result.kept);
  EXPECT_THAT(Paths(l.lifted), Contains(HasSubstr("map_impl/body_graph_0/relu")));
}

TEST(LiftControlFlow, NestedLoopAndCondLiftFromTheInsideOut) {
  const Lifted l = Lift("nested_loop_cond");
  ExpectStraightLine(l.lifted);
  ExpectSameShapes(l);
  // The loop's first iteration (i = 0) takes the cond's even branch.
  EXPECT_THAT(Paths(l.lifted), Contains(HasSubstr("while_loop_body_graph_0/cond/false_graph_0/sigmoid")));
}

TEST(LiftControlFlow, AnAutocastRegionIsDistributedOverItsOps) {
  const Lifted l = Lift("autocast_region");
  ExpectStraightLine(l.lifted);
  // Each op in a region of its own computes as it did in the one region, bit for bit.
  ExpectSameValues(l);
  int regions = 0;
  for (const auto& n : l.lifted.nodes) regions += HigherOrderName(n) == "wrap_with_autocast";
  EXPECT_GE(regions, 2);  // the linear and the relu
  EXPECT_THAT(OperatorNames(l.lifted), Contains("aten.relu.default"));
}

TEST(LiftControlFlow, AProgramWithoutControlFlowIsLeftAlone) {
  auto archive = Pt2Archive::Open("testdata/corpus/mlp.pt2");
  const Program p = Program::Parse(archive->ProgramJson("model"), "mlp");
  EXPECT_FALSE(HasControlFlow(p));
  const LiftedProgram l = LiftControlFlow(p, {});
  EXPECT_TRUE(l.lifted.empty());
  ASSERT_EQ(l.program.nodes.size(), p.nodes.size());
  for (size_t i = 0; i < p.nodes.size(); ++i) EXPECT_EQ(l.program.nodes[i].name, p.nodes[i].name);
}

TEST(LiftControlFlow, ALoopThatDidNotRunStays) {
  auto archive = Pt2Archive::Open("testdata/corpus/while_loop_layer.pt2");
  const Program p = Program::Parse(archive->ProgramJson("model"), "while_loop_layer");
  std::map<std::string, ControlFlowTaken> taken;
  taken["while_loop"].iterations = 0;
  const LiftedProgram l = LiftControlFlow(p, taken);
  EXPECT_TRUE(l.lifted.empty());
  EXPECT_THAT(l.kept, Contains(HasSubstr("ran no iteration")));
  EXPECT_TRUE(HasControlFlow(l.program));
}

}  // namespace
}  // namespace aoti
