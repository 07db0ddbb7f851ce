// A candidate archive keeps each input as it was given: a cut at a transpose or an expand
// is an input with that layout, and the compiled candidate is checked against it. It
// carries the weights it uses and no others.
#include "reducer/candidate_archive.h"

#include <filesystem>
#include <set>
#include <string>

#include <ATen/ATen.h>
#include <gflags/gflags.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/program/program.h"
#include "harness/program/program_state.h"
#include "harness/archive/pt2_archive.h"
#include "harness/archive/tensor_io.h"
#include "reducer/graph_edit.h"

DEFINE_string(package, "", "A compiled package (testdata:mlp).");

namespace aoti {
namespace {

TEST(CandidateArchive, KeepsEachInputsLayout) {
  auto original = Pt2Archive::Open(FLAGS_package);
  const Program program = Program::Parse(original->ProgramJson("model"), FLAGS_package);
  const at::Tensor base = at::arange(24, at::kFloat).reshape({4, 6});
  const std::vector<at::Tensor> inputs = {base.t(), base.select(0, 1).unsqueeze(0).expand({3, 6}),
                                          base.slice(1, 0, 6, 2), at::arange(5, at::kLong)};
  const std::string out = std::string(getenv("TEST_TMPDIR")) + "/candidate.pt2";
  WriteCandidateArchive(*original, "model", program, inputs, "{}", out);

  auto candidate = Pt2Archive::Open(out);
  EXPECT_TRUE(candidate->HasProgram("model"));
  EXPECT_FALSE(candidate->HasCompiledModel("model"));
  const auto got = candidate->SampleInputs();
  ASSERT_EQ(got.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE(DescribeTensor(inputs[i]));
    EXPECT_EQ(got[i].scalar_type(), inputs[i].scalar_type());
    EXPECT_EQ(got[i].sizes(), inputs[i].sizes());
    EXPECT_EQ(got[i].strides(), inputs[i].strides());
    EXPECT_TRUE(at::equal(got[i], inputs[i]));
  }
}

// FirstNodeAlone: the program cut to its first node (the mlp's fc1 linear).
Program FirstNodeAlone(const Program& program) {
  std::vector<bool> keep(program.nodes.size(), false);
  keep[0] = true;
  return RemoveUnusedInputs(KeepNodes(program, keep, OutputMode::kLast));
}

// The weight records of an archive (data/weights/*, its configs left out).
std::set<std::string> WeightRecords(const Pt2Archive& archive) {
  std::set<std::string> out;
  for (const auto& rec : archive.Records()) {
    if (rec.rfind("data/weights/", 0) == 0 && rec.find("_config.json") == std::string::npos) out.insert(rec);
  }
  return out;
}

// A candidate of the first node alone (fc1's linear) carries fc1's weight and bias, named
// in its config and stored, and none of the model's other weights.
TEST(CandidateArchive, CarriesOnlyTheWeightsItUses) {
  auto original = Pt2Archive::Open(FLAGS_package);
  const Program program = Program::Parse(original->ProgramJson("model"), FLAGS_package);
  const Program cut = FirstNodeAlone(program);
  std::set<std::string> used;
  for (const auto& s : cut.input_specs) {
    if (!s.target.empty()) used.insert(s.target);
  }
  ASSERT_FALSE(used.empty()) << "the first node reads no weight";
  const std::string out = std::string(getenv("TEST_TMPDIR")) + "/first_node.pt2";
  WriteCandidateArchive(*original, "model", cut, original->SampleInputs(), "{}", out);

  auto candidate = Pt2Archive::Open(out);
  const auto config = nlohmann::json::parse(candidate->ReadRecord("data/weights/model_weights_config.json"))["config"];
  std::set<std::string> named, paths;
  for (const auto& [fqn, entry] : config.items()) {
    named.insert(fqn);
    paths.insert("data/weights/" + entry["path_name"].get<std::string>());
  }
  EXPECT_EQ(named, used);
  EXPECT_EQ(WeightRecords(*candidate), paths) << "the stored weights are not the ones the config names";
  EXPECT_LT(WeightRecords(*candidate).size(), WeightRecords(*original).size());
  EXPECT_LT(std::filesystem::file_size(out), std::filesystem::file_size(FLAGS_package));
}

// With random weights, the same cut carries fc1's weight and bias as random values of the
// same shape, dtype and scale, none equal to the model's, the same on every write.
TEST(CandidateArchive, RandomWeightsKeepShapeDtypeAndScale) {
  auto original = Pt2Archive::Open(FLAGS_package);
  const Program program = Program::Parse(original->ProgramJson("model"), FLAGS_package);
  const Program cut = FirstNodeAlone(program);
  const std::string dir = std::string(getenv("TEST_TMPDIR"));
  WriteCandidateArchive(*original, "model", cut, original->SampleInputs(), "{}", dir + "/random.pt2",
                        CandidateWeights::kRandom);
  WriteCandidateArchive(*original, "model", cut, original->SampleInputs(), "{}", dir + "/random_again.pt2",
                        CandidateWeights::kRandom);
  const ProgramState real = LoadProgramState(*original, "model");
  const ProgramState random = LoadProgramState(*Pt2Archive::Open(dir + "/random.pt2"), "model");
  const ProgramState again = LoadProgramState(*Pt2Archive::Open(dir + "/random_again.pt2"), "model");
  ASSERT_FALSE(random.weights.empty());
  for (const auto& [fqn, r] : random.weights) {
    SCOPED_TRACE(fqn);
    const at::Tensor m = real.weights.at(fqn);
    EXPECT_EQ(r.sizes(), m.sizes());
    EXPECT_EQ(r.scalar_type(), m.scalar_type());
    EXPECT_FALSE(at::equal(r, m)) << "the model's own values";
    EXPECT_TRUE(at::equal(r, again.weights.at(fqn))) << "not the same on every write";
    if (m.numel() > 16) {
      const double scale = m.std().item<double>();
      EXPECT_NEAR(r.mean().item<double>(), m.mean().item<double>(), scale);
      EXPECT_NEAR(r.std().item<double>(), scale, 0.5 * scale);
    }
  }
}

}  // namespace
}  // namespace aoti
