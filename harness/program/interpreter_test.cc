// The C++ interpreter against Python eager on the fidelity corpus (testdata/corpus), plus
// float64 mode, intermediates, buffer mutation, dynamic shapes and bad programs.
#include "harness/program/interpreter.h"

#include <dirent.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include <ATen/TensorOperators.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/full.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/zeros.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/archive/archive_rewrite.h"
#include "harness/util/errors.h"
#include "harness/program/program_state.h"
#include "harness/archive/pt2_archive.h"
#include "harness/archive/tensor_io.h"

namespace aoti {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kCorpusDir[] = "testdata/corpus";

std::vector<std::string> CorpusPrograms() {
  std::vector<std::string> names;
  if (DIR* d = opendir(kCorpusDir)) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 4 && n.substr(n.size() - 4) == ".pt2") names.push_back(n.substr(0, n.size() - 4));
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string PathOf(const std::string& program) { return std::string(kCorpusDir) + "/" + program + ".pt2"; }

// Programs whose interpreter outputs are not bit-identical to Python eager, and why.
// Everything else must match bit for bit: the same ATen CPU kernels run on the same data.
const std::map<std::string, std::pair<double, std::string>>& Tolerances() {
  static const auto* t = new std::map<std::string, std::pair<double, std::string>>{};
  return *t;
}

class CorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusTest, InterpreterMatchesPythonEager) {
  const std::string path = PathOf(GetParam());
  auto archive = Pt2Archive::Open(path);
  auto interp = Interpreter::FromArchive(*archive, "model");
  const auto expected = archive->RecordedEagerOutputs();
  const auto got = interp->RunTensors(archive->SampleInputs());
  ASSERT_EQ(got.size(), expected.size());
  const auto& records = archive->Manifest()->eager_outputs;
  auto tol = Tolerances().find(GetParam());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i) + " '" + records[i].name + "'");
    ASSERT_EQ(got[i].scalar_type(), expected[i].scalar_type());
    ASSERT_EQ(got[i].sizes(), expected[i].sizes());
    if (tol == Tolerances().end()) {
      EXPECT_TRUE(at::equal(got[i], expected[i]))
          << "not bit-identical: max |diff| "
          << (got[i].to(at::kDouble) - expected[i].to(at::kDouble)).abs().max().item<double>();
    } else {
      EXPECT_TRUE(at::allclose(got[i], expected[i], tol->second.first, tol->second.first))
          << "beyond the documented tolerance " << tol->second.first << " (" << tol->second.second << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusTest, ::testing::ValuesIn(CorpusPrograms()),
                         [](const auto& info) { return info.param; });

TEST(Corpus, HasAtLeastThirtyPrograms) { EXPECT_GE(CorpusPrograms().size(), 30u); }

// loop_nonzero.py: a while_loop whose body keeps h[h > 0] and a nonzero() of a state that
// changes, so each iteration makes sizes of its own. Each iteration binds them anew (they
// were once bound by the first, and the second iteration's other count was taken for
// inputs breaking the program's assumptions); the run reports the first iteration's.
TEST(Loops, ADataDependentSizeInALoopBodyBindsAnewEachIteration) {
  auto archive = Pt2Archive::Open(PathOf("loop_nonzero"));
  auto interp = Interpreter::FromArchive(*archive, "model");
  const std::vector<at::Tensor> inputs = archive->SampleInputs();
  const RunResult r = interp->Run(inputs);
  ASSERT_EQ(r.outputs.size(), 2u);
  const int64_t first = (inputs[0] > 0).sum().item<int64_t>();
  const int64_t total = r.outputs[1].toTensor().item<int64_t>();
  EXPECT_EQ(total, archive->RecordedEagerOutputs()[1].item<int64_t>());
  EXPECT_NE(total, 3 * first) << "the three iterations kept the same count; the program no longer tests this";
  EXPECT_THAT(r.symbols, ::testing::Contains(::testing::Pair(::testing::_, first)));
}

// RunAll returns every value the run produced, by name.
std::map<std::string, c10::IValue> RunAll(Interpreter& interp, const std::vector<at::Tensor>& inputs,
                                          std::vector<at::Tensor>* outputs) {
  RunOptions opts;
  opts.keep_all = true;
  RunResult r = interp.Run(inputs, opts);
  for (const auto& o : r.outputs) outputs->push_back(o.toTensor());
  return r.intermediates;
}

double Rmse(const at::Tensor& a, const at::Tensor& ref) {
  return (a.to(at::kDouble) - ref.to(at::kDouble)).pow(2).mean().sqrt().item<double>();
}

// while_loop_layer.py with steps = 0: the loop runs no iteration, and its carried values come
// out as copies of its operands, as torch's while_loop returns them, never the operands
// themselves (a later in-place op would write the input, or a weight held across runs).
TEST(Loops, AZeroTripLoopReturnsCopiesOfItsOperands) {
  auto archive = Pt2Archive::Open(PathOf("while_loop_layer"));
  auto interp = Interpreter::FromArchive(*archive, "model");
  std::vector<at::Tensor> inputs = archive->SampleInputs();
  ASSERT_EQ(inputs.size(), 2u);
  inputs[1] = at::zeros({}, at::kLong);
  std::vector<at::Tensor> outputs;
  const auto values = RunAll(*interp, inputs, &outputs);
  EXPECT_EQ(outputs.at(1).item<int64_t>(), 0);
  EXPECT_TRUE(at::equal(outputs.at(0), inputs[0] * 2));
  // The counter's operand is a node's value ('zeros'), the loop's counter result 'getitem'.
  ASSERT_TRUE(values.count("zeros") && values.count("getitem")) << "the program's names changed";
  const at::Tensor operand = values.at("zeros").toTensor(), result = values.at("getitem").toTensor();
  EXPECT_TRUE(at::equal(result, operand));
  EXPECT_FALSE(result.is_alias_of(operand)) << "the loop returned its operand itself";
}

// while_loop_layer.py with a bound the counter never reaches: the run stops at its deadline
// (RunStopped), saying the deadline, the node and the loop's iteration, and no later than a
// node or an iteration after it. Without a deadline the run has none (the check gives it one).
TEST(Loops, ALoopThatDoesNotEndStopsAtTheDeadlineNamingItsIteration) {
  auto archive = Pt2Archive::Open(PathOf("while_loop_layer"));
  std::vector<at::Tensor> inputs = archive->SampleInputs();
  ASSERT_EQ(inputs.size(), 2u);
  inputs[1] = at::full({}, std::numeric_limits<int64_t>::max(), at::kLong);
  for (const bool fp64 : {false, true}) {
    SCOPED_TRACE(fp64 ? "float64" : "eager");
    InterpreterOptions o;
    o.fp64 = fp64;
    const auto start = Deadline::Clock::now();
    o.deadline = Deadline(start + std::chrono::milliseconds(300), "a test's deadline");
    auto interp = Interpreter::FromArchive(*archive, "model", o);
    try {
      interp->RunTensors(inputs);
      ADD_FAILURE() << "a loop of 2^63 iterations ended";
    } catch (const RunStopped& e) {
      const double took = std::chrono::duration<double>(Deadline::Clock::now() - start).count();
      EXPECT_LT(took, 5.0);
      EXPECT_THAT(e.what(), ::testing::HasSubstr(std::string(fp64 ? "the float64 run" : "the eager run") +
                                                 " did not end by a test's deadline: stopped "));
      EXPECT_THAT(e.what(), ::testing::ContainsRegex("iteration [0-9]+ of node 'while_loop' \\([a-z_.]*while_loop\\)"));
    }
  }
  // The same interpreter given a later deadline runs the sample to its end.
  auto interp = Interpreter::FromArchive(*archive, "model");
  interp->SetDeadline(Deadline(Deadline::Clock::now() + std::chrono::seconds(60), "a minute"));
  EXPECT_EQ(interp->RunTensors(archive->SampleInputs()).size(), 2u);
}

TEST(Fp64Mode, EveryFloatingValueIsFloat64AndCloserToPythonFp64) {
  for (const std::string program : {"mlp", "fp16_mlp", "bf16_mlp", "layer_norm", "residual_block"}) {
    SCOPED_TRACE(program);
    auto archive = Pt2Archive::Open(PathOf(program));
    auto native = Interpreter::FromArchive(*archive, "model");
    auto fp64 = Interpreter::FromArchive(*archive, "model", {/*fp64=*/true});
    const auto inputs = archive->SampleInputs();
    std::vector<at::Tensor> native_out, fp64_out;
    RunAll(*native, inputs, &native_out);
    const auto values = RunAll(*fp64, inputs, &fp64_out);
    size_t floating = 0;
    for (const auto& [name, v] : values) {
      if (!v.isTensor()) continue;
      const auto t = v.toTensor().scalar_type();
      if (c10::isFloatingType(t)) {
        ++floating;
        EXPECT_EQ(t, at::kDouble) << "intermediate '" << name << "'";
      }
    }
    EXPECT_GE(floating, 2u);
    const auto py64 = archive->RecordedEagerFp64Outputs();
    ASSERT_EQ(py64.size(), fp64_out.size());
    for (size_t i = 0; i < py64.size(); ++i) {
      EXPECT_EQ(fp64_out[i].scalar_type(), at::kDouble);
      const double e64 = Rmse(fp64_out[i], py64[i]);
      const double enative = Rmse(native_out[i], py64[i]);
      EXPECT_LT(e64, enative) << "fp64 interpreter rmse " << e64 << " vs native " << enative;
      EXPECT_LT(e64, 1e-12);
    }
  }
}

// Promoted once (PromoteStateToFp64, as localize_first does for every node's reference):
// an fp64 interpreter given that state computes what one given the model's own state does,
// tied tensors stay tied, and the model's own state is left as it was.
TEST(Fp64Mode, AStatePromotedOnceGivesTheSameReference) {
  for (const std::string program : {"mlp", "bf16_mlp", "tied_buffer_mutation", "lifted_state"}) {
    SCOPED_TRACE(program);
    auto archive = Pt2Archive::Open(PathOf(program));
    const Program prog = Program::Parse(archive->ProgramJson("model"), program);
    const ProgramState state = LoadProgramState(*archive, "model");
    std::map<std::string, at::ScalarType> before;
    for (const auto& [name, t] : state.weights) before[name] = t.scalar_type();
    const ProgramState promoted = PromoteStateToFp64(state);
    for (const auto& [name, t] : promoted.weights) {
      if (c10::isFloatingType(t.scalar_type())) EXPECT_EQ(t.scalar_type(), at::kDouble) << name;
    }
    for (const auto& [name, t] : state.weights) {
      EXPECT_EQ(t.scalar_type(), before.at(name)) << name << ": the model's own state was changed";
    }
    // Tensors that shared a storage still do.
    for (const auto& [a, ta] : state.weights) {
      for (const auto& [b, tb] : state.weights) {
        if (a < b && ta.storage().is_alias_of(tb.storage())) {
          EXPECT_TRUE(promoted.weights.at(a).storage().is_alias_of(promoted.weights.at(b).storage())) << a << ", " << b;
        }
      }
    }
    InterpreterOptions o64;
    o64.fp64 = true;
    const auto inputs = archive->SampleInputs();
    const auto each = Interpreter(prog, state, o64).RunTensors(inputs);
    const auto once = Interpreter(prog, promoted, o64).RunTensors(inputs);
    ASSERT_EQ(each.size(), once.size());
    for (size_t i = 0; i < each.size(); ++i) EXPECT_TRUE(at::equal(each[i], once[i])) << "output " << i;
  }
}

// As upstream's cast_to_fp64: dtype= keywords become float64, a positional dtype stays, and
// view.dtype stays a bitcast (dtype_args.py).
TEST(Fp64Mode, PromotesWhatUpstreamPromotes) {
  auto archive = Pt2Archive::Open(PathOf("dtype_args"));
  auto native = Interpreter::FromArchive(*archive, "model");
  auto fp64 = Interpreter::FromArchive(*archive, "model", {/*fp64=*/true});
  const auto inputs = archive->SampleInputs();
  RunOptions all;
  all.keep_all = true;
  const RunResult n = native->Run(inputs, all);
  const RunResult f = fp64->Run(inputs, all);
  EXPECT_EQ(f.intermediates.at("ones").toTensor().scalar_type(), at::kDouble);  // dtype= keyword
  EXPECT_EQ(f.intermediates.at("to").toTensor().scalar_type(), at::kHalf);      // x.to(torch.float16)
  const at::Tensor bits = f.outputs.at(1).toTensor();                          // bits.view(torch.float32) * 2
  EXPECT_EQ(bits.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(bits, n.outputs.at(1).toTensor())) << "the bitcast changed in float64 mode";
  EXPECT_EQ(f.outputs.at(0).toTensor().scalar_type(), at::kDouble);
}

TEST(Intermediates, UnrequestedValuesAreFreedAfterTheirLastUse) {
  auto archive = Pt2Archive::Open(PathOf("residual_block"));
  auto interp = Interpreter::FromArchive(*archive, "model");
  const size_t nodes = interp->program().nodes.size();
  ASSERT_GE(nodes, 20u);
  RunResult lean = interp->Run(archive->SampleInputs());
  RunOptions all;
  all.keep_all = true;
  RunResult full = interp->Run(archive->SampleInputs(), all);
  EXPECT_GE(full.intermediates.size(), nodes);
  EXPECT_LT(lean.peak_live_values, full.intermediates.size());
  // Only the parameters, the input and a handful of live activations are held at once.
  EXPECT_LE(lean.peak_live_values, interp->program().input_specs.size() + 6);

  RunOptions chosen;
  chosen.keep = {"gelu"};
  size_t observed = 0;
  chosen.observer = [&](const Node&, const std::string&, const c10::IValue&) { ++observed; };
  RunResult some = interp->Run(archive->SampleInputs(), chosen);
  EXPECT_EQ(some.intermediates.size(), 1u);
  EXPECT_TRUE(some.intermediates.count("gelu"));
  EXPECT_GE(observed, nodes);
}

TEST(BufferMutation, RunningStatisticsAdvanceAcrossRuns) {
  auto archive = Pt2Archive::Open(PathOf("buffer_mutation"));
  auto interp = Interpreter::FromArchive(*archive, "model");
  const auto inputs = archive->SampleInputs();
  const auto first = interp->RunTensors(inputs);
  EXPECT_EQ(interp->state().weights.at("steps").item<int64_t>(), 1);
  const auto second = interp->RunTensors(inputs);
  EXPECT_EQ(interp->state().weights.at("steps").item<int64_t>(), 2);
  EXPECT_EQ(second[1].item<int64_t>(), 2);
  EXPECT_FALSE(at::equal(first[0], second[0]));
}

// torch.sym_max/sym_min/sym_not/sym_ite and a SymBool and_ (sym_ops.py), at other sizes.
TEST(DynamicShapes, SymbolicHelpersComputeTheSize) {
  auto archive = Pt2Archive::Open(PathOf("sym_ops"));
  auto interp = Interpreter::FromArchive(*archive, "model");
  for (const auto& [a, b] : std::vector<std::pair<int64_t, int64_t>>{{2, 5}, {7, 3}, {4, 6}}) {
    const auto out = interp->RunTensors({at::ones({a, 2}), at::ones({b, 2})});
    const int64_t hi = std::max(a, b), lo = std::min(a, b);
    EXPECT_EQ(out.at(0).size(0), hi + lo + lo) << a << ", " << b;  // both > 1, so sym_ite picks lo
  }
}

TEST(DynamicShapes, RunsAtASecondBatchSize) {
  auto archive = Pt2Archive::Open(PathOf("dynamic_batch"));
  auto interp = Interpreter::FromArchive(*archive, "model");
  const auto sig = interp->program().Signature();
  ASSERT_EQ(sig.user_inputs.size(), 1u);
  EXPECT_TRUE(sig.user_inputs[0].sizes[0].is_symbolic());
  const at::Tensor x = archive->SampleInputs()[0];  // batch 8
  const at::Tensor full = interp->RunTensors({x})[0];
  const at::Tensor part = interp->RunTensors({x.narrow(0, 0, 3).contiguous()})[0];
  ASSERT_EQ(part.size(0), 3);
  // The model scales by the batch size, a SymInt read at run time.
  EXPECT_TRUE(at::allclose(part, full.narrow(0, 0, 3) * (3.0 / 8.0), 1e-5, 1e-6));
}

// Bad programs: each error names the node or the file.
class BadProgram : public ::testing::Test {
 protected:
  void SetUp() override {
    archive_ = Pt2Archive::Open(PathOf("mlp"));
    json_ = nlohmann::json::parse(archive_->ProgramJson("model"));
  }
  std::string Error(const nlohmann::json& doc, bool drop_weight = false) {
    try {
      Program p = Program::Parse(doc.dump(), "edited.pt2");
      ProgramState state = LoadProgramState(*archive_, "model");
      if (drop_weight) state.weights.erase("fc2.weight");
      Interpreter interp(std::move(p), std::move(state));
      interp.RunTensors(archive_->SampleInputs());
    } catch (const HarnessError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error";
    return "";
  }
  nlohmann::json& Nodes() { return json_["graph_module"]["graph"]["nodes"]; }
  std::unique_ptr<Pt2Archive> archive_;
  nlohmann::json json_;
};

TEST_F(BadProgram, CorruptJson) {
  try {
    Program::Parse("{\"schema_version\": ", "corrupt.pt2");
    FAIL() << "corrupt JSON parsed";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("corrupt.pt2"), HasSubstr("not valid JSON")));
  }
}

// An output that is an empty object (or no object) is an error naming the node or the
// spec, not an assertion that takes the test binary down.
TEST_F(BadProgram, EmptyNodeOutput) {
  Nodes()[0]["outputs"][0] = nlohmann::json::object();
  EXPECT_THAT(Error(json_), HasSubstr("an output is {}"));
  Nodes()[0].erase("name");
  Nodes()[0]["outputs"][0] = nlohmann::json::object();
  EXPECT_FALSE(Error(json_).empty());
  Nodes()[0]["outputs"][0] = 7;
  EXPECT_FALSE(Error(json_).empty());
}

TEST_F(BadProgram, EmptyOutputSpec) {
  json_["graph_module"]["signature"]["output_specs"][0] = nlohmann::json::object();
  EXPECT_THAT(Error(json_), HasSubstr("an output spec is {}"));
}

TEST_F(BadProgram, NodeNamesAMissingValue) {
  Nodes()[1]["inputs"][0]["arg"]["as_tensor"]["name"] = "ghost";
  EXPECT_THAT(Error(json_), AllOf(HasSubstr("uses value 'ghost'"), HasSubstr("node '")));
}

TEST_F(BadProgram, UnknownOperator) {
  Nodes()[0]["target"] = "torch.ops.aten.frobnicate.default";
  EXPECT_THAT(Error(json_), AllOf(HasSubstr("aten::frobnicate"), HasSubstr("not registered"),
                                  HasSubstr("node 'linear'")));
}

// A higher-order op the interpreter does not run is named as a construct not run yet,
// never as an operator some library should define.
TEST_F(BadProgram, UnknownHigherOrderOpIsNamedAsNotRunYet) {
  Nodes()[0]["target"] = "torch.ops.higher_order.invoke_subgraph";
  EXPECT_THAT(Error(json_), AllOf(HasSubstr("higher-order op 'invoke_subgraph'"), HasSubstr("node 'linear'"),
                                  HasSubstr("does not run yet"), ::testing::Not(HasSubstr("library"))));
}

// A cond whose subgraphs are missing: the node and what it lacks.
TEST_F(BadProgram, CondWithoutItsBranches) {
  Nodes()[0]["target"] = "torch.ops.higher_order.cond";
  EXPECT_THAT(Error(json_), AllOf(HasSubstr("node 'linear'"), HasSubstr("cond takes 2 subgraph(s), the node has 0")));
}

TEST_F(BadProgram, SchemaVersionFromTheFuture) {
  json_["schema_version"]["major"] = 42;
  EXPECT_THAT(Error(json_), AllOf(HasSubstr("edited.pt2"), HasSubstr("42."), HasSubstr("not supported")));
}

TEST_F(BadProgram, MissingWeight) {
  EXPECT_THAT(Error(json_, /*drop_weight=*/true), AllOf(HasSubstr("fc2.weight"), HasSubstr("missing")));
}

TEST_F(BadProgram, TokenInputIsNamedAsNotSupported) {
  // The first input spec (a parameter) turned into an effect token.
  auto& specs = json_["graph_module"]["signature"]["input_specs"];
  const std::string name = specs[0].begin().value()["arg"]["name"];
  specs[0] = {{"token", {{"arg", {{"name", name}}}}}};
  EXPECT_THAT(Error(json_), AllOf(HasSubstr("'" + name + "'"), HasSubstr("token"), HasSubstr("not supported yet")));
}

TEST_F(BadProgram, CustomObjectInputIsNamedAsNotSupported) {
  auto& specs = json_["graph_module"]["signature"]["input_specs"];
  const std::string name = specs[0].begin().value()["arg"]["name"];
  specs[0] = {{"custom_obj", {{"arg", {{"name", name}, {"class_fqn", "__torch__.torch.classes.my.Obj"}}},
                              {"custom_obj_name", "my_obj"}}}};
  EXPECT_THAT(Error(json_), AllOf(HasSubstr("'" + name + "'"), HasSubstr("custom_obj ('my_obj')"),
                                  HasSubstr("not supported yet")));
}

// Every kind of lifted input, read from where torch.export.save put it (lifted_state.py).
TEST(LiftedState, EachInputKindIsReadFromWhereTheArchiveKeepsIt) {
  auto archive = Pt2Archive::Open(PathOf("lifted_state"));
  ProgramState state = LoadProgramState(*archive, "model");
  for (const char* fqn : {"fc.weight", "fc.bias", "scale"}) EXPECT_TRUE(state.weights.count(fqn)) << fqn;
  for (const char* fqn : {"position_ids", "inv_freq", "offset", "lifted_tensor_0"}) {
    EXPECT_TRUE(state.constants.count(fqn)) << fqn;
  }
  auto interp = Interpreter::FromArchive(*archive, "model");
  const auto got = interp->RunTensors(archive->SampleInputs());
  EXPECT_TRUE(at::equal(got.at(0), archive->RecordedEagerOutputs().at(0)));
}

// An int literal where the schema wants a float (layer_norm's `float eps`) runs as the
// same float would.
TEST(SchemaCoercion, IntegerLiteralForAFloatArgument) {
  auto archive = Pt2Archive::Open(PathOf("layer_norm"));
  nlohmann::json doc = nlohmann::json::parse(archive->ProgramJson("model"));
  auto run_with_eps = [&](const nlohmann::json& eps) {
    nlohmann::json edited = doc;
    bool found = false;
    for (auto& n : edited["graph_module"]["graph"]["nodes"]) {
      if (n["target"] != "torch.ops.aten.layer_norm.default") continue;
      for (auto& in : n["inputs"]) {
        if (in["name"] == "eps") {
          in["arg"] = eps;
          found = true;
        }
      }
    }
    EXPECT_TRUE(found) << "no layer_norm eps argument in the program";
    Interpreter interp(Program::Parse(edited.dump(), "edited.pt2"), LoadProgramState(*archive, "model"));
    return interp.RunTensors(archive->SampleInputs());
  };
  const auto as_int = run_with_eps({{"as_int", 1}});
  const auto as_float = run_with_eps({{"as_float", 1.0}});
  ASSERT_EQ(as_int.size(), as_float.size());
  EXPECT_TRUE(at::equal(as_int[0], as_float[0]));
}

TEST_F(BadProgram, MissingWeightFileInArchive) {
  // A copy of the archive without one weight's data: its config still points at it.
  std::string dropped;
  const std::string copy = std::string(std::getenv("TEST_TMPDIR")) + "/missing_weight.pt2";
  RewriteArchive(*archive_, copy, [&](const std::string& rec, std::string*) {
    if (!dropped.empty() || rec.rfind("data/weights/weight_", 0) != 0) return true;
    dropped = rec;
    return false;
  });
  ASSERT_FALSE(dropped.empty()) << "the archive has no weight files";
  auto broken = Pt2Archive::Open(copy);
  try {
    LoadProgramState(*broken, "model");
    FAIL() << "a missing weight file loaded";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("missing_weight.pt2"), HasSubstr(dropped), HasSubstr("missing")));
  }
}

// Found by the archive fuzzer: a weight whose tensor_meta has a negative storage offset
// reached libtorch's as_strided, whose error was not a HarnessError.
TEST_F(BadProgram, NegativeStorageOffsetIsRefusedWithTheWeightsName) {
  const std::string copy = std::string(std::getenv("TEST_TMPDIR")) + "/negative_offset.pt2";
  RewriteArchive(*archive_, copy, [&](const std::string& rec, std::string* data) {
    if (rec == "data/weights/model_weights_config.json") {
      nlohmann::json config = nlohmann::json::parse(*data);
      config["config"].begin().value()["tensor_meta"]["storage_offset"] = {{"as_int", -1}};
      *data = config.dump();
    }
    return true;
  });
  auto broken = Pt2Archive::Open(copy);
  try {
    LoadProgramState(*broken, "model");
    FAIL() << "a negative storage offset loaded";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("negative_offset.pt2"), HasSubstr("negative storage offset")));
  }
}

// An operator with several returns whose node names them as one list (as_tensors): each
// getitem reads its own return.
TEST(MultiReturn, SeveralReturnsNamedAsOneList) {
  auto archive = Pt2Archive::Open(PathOf("sort_topk_cumsum"));
  nlohmann::json doc = nlohmann::json::parse(archive->ProgramJson("model"));
  bool edited = false;
  for (auto& node : doc["graph_module"]["graph"]["nodes"]) {
    if (node["target"] != "torch.ops.aten.topk.default") continue;
    nlohmann::json names = nlohmann::json::array();
    for (const auto& out : node["outputs"]) names.push_back(out["as_tensor"]);
    ASSERT_EQ(names.size(), 2u);
    // The list itself gets a name the getitem nodes read from.
    node["outputs"] = nlohmann::json::array({{{"as_tensors", names}}});
    edited = true;
  }
  ASSERT_TRUE(edited) << "the corpus program has no topk";
  Interpreter interp(Program::Parse(doc.dump(), "edited.pt2"), LoadProgramState(*archive, "model"));
  const auto got = interp.RunTensors(archive->SampleInputs());
  const auto expected = archive->RecordedEagerOutputs();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(at::equal(got[i], expected[i])) << "output " << i;
}

}  // namespace
}  // namespace aoti
