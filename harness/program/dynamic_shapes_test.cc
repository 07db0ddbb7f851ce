// The shapes a dynamic package is checked at, and the inputs made at them, on the corpus'
// dynamic-batch program (batch in [2, 64], sample batch 8) and edits of it.
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "harness/program/dynamic_shapes.h"
#include "harness/program/input_roles.h"
#include "harness/program/interpreter.h"
#include "harness/util/errors.h"
#include "harness/archive/pt2_archive.h"

DEFINE_string(dynamic_batch, "", "//testdata/corpus:dynamic_batch_aoti");
DEFINE_string(static_package, "", "//testdata:mlp");
DEFINE_string(embedding_bag, "", "//testdata:embedding_bag_dynamic");

namespace aoti {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Program Load(const std::string& path) {
  auto archive = Pt2Archive::Open(path);
  return Program::Parse(archive->ProgramJson(archive->ResolveModelName("")), path);
}

std::string BatchSymbol(const Program& p) { return p.Signature().user_inputs.at(0).sizes.at(0).sym; }

TEST(ShapePoints, AStaticProgramHasNone) {
  auto archive = Pt2Archive::Open(FLAGS_static_package);
  EXPECT_TRUE(ShapePoints(Load(FLAGS_static_package), archive->SampleInputsOnCpu()).empty());
}

TEST(ShapePoints, EachSymbolAtItsMinimumAndMaximum) {
  const Program p = Load(FLAGS_dynamic_batch);
  const std::vector<ShapePoint> points = ShapePoints(p, {at::randn({8, 12})});
  ASSERT_EQ(points.size(), 2u);  // one symbol: no "distinct" point
  EXPECT_EQ(points[0].name, "min");
  EXPECT_THAT(points[0].sizes, ElementsAre(ElementsAre(2, 12)));
  EXPECT_EQ(points[1].name, "max");
  EXPECT_THAT(points[1].sizes, ElementsAre(ElementsAre(64, 12)));
  EXPECT_EQ(points[1].symbols.at(BatchSymbol(p)), 64);
}

TEST(ShapePoints, AnUnboundedSymbolGoesToTwiceItsSampleAndThePointSaysSo) {
  Program p = Load(FLAGS_dynamic_batch);
  p.range_constraints[BatchSymbol(p)].max = INT64_MAX;
  const std::vector<ShapePoint> points = ShapePoints(p, {at::randn({8, 12})});
  ASSERT_EQ(points.size(), 2u);
  EXPECT_THAT(points[1].sizes, ElementsAre(ElementsAre(16, 12)));
  EXPECT_EQ(points[1].name, "large") << "twice the sample is not the max";
  EXPECT_THAT(points[1].what, HasSubstr("has no upper bound: taken at twice its sample size (16)"));
  EXPECT_EQ(points[0].what, "every symbol at its minimum");
}

// A declared maximum whose inputs would not fit: scaled down toward the sample until they
// take at most the cap, and named for what it is.
TEST(ShapePoints, AHugeDeclaredMaxIsCappedAndSaysSo) {
  Program p = Load(FLAGS_dynamic_batch);
  p.range_constraints[BatchSymbol(p)].max = int64_t{1} << 30;  // 48 GiB of float32[batch, 12]
  const std::vector<ShapePoint> points = ShapePoints(p, {at::randn({8, 12})}, /*max_input_bytes=*/1 << 20);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[1].name, "large");
  const int64_t batch = points[1].sizes.at(0).at(0);
  EXPECT_GT(batch, 8);
  EXPECT_LE(batch * 12 * 4, 1 << 20);
  EXPECT_GT((batch + 100) * 12 * 4, 1 << 20) << "capped far below what fits";
  EXPECT_THAT(points[1].what, AllOf(HasSubstr("capped at " + std::to_string(batch) + " of its declared max 1073741824"),
                                    HasSubstr("over the cap of 1 MiB")));
  // Within the cap, the max is the max.
  p.range_constraints[BatchSymbol(p)].max = 64;
  EXPECT_EQ(ShapePoints(p, {at::randn({8, 12})}, 1 << 20)[1].name, "max");
}

// Two symbols of equal sample size (pytorch#153896's trigger): "distinct" parts them.
TEST(ShapePoints, DistinctSizesForSymbolsTheSampleMakesEqual) {
  Program p = Load(FLAGS_dynamic_batch);
  const std::string batch = BatchSymbol(p);
  const std::string input = p.Signature().user_inputs.at(0).name;
  p.tensor_values.at(input).sizes.at(1).sym = "zz_features";
  p.range_constraints["zz_features"] = {2, 12};
  const std::vector<ShapePoint> points = ShapePoints(p, {at::randn({8, 8})});
  ASSERT_EQ(points.size(), 3u);
  EXPECT_THAT(points[0].sizes, ElementsAre(ElementsAre(2, 2)));
  EXPECT_THAT(points[1].sizes, ElementsAre(ElementsAre(64, 12)));
  EXPECT_EQ(points[2].name, "distinct");
  EXPECT_NE(points[2].symbols.at(batch), points[2].symbols.at("zz_features"));
  // Sizes the sample already keeps apart need no third point.
  EXPECT_EQ(ShapePoints(p, {at::randn({8, 6})}).size(), 2u);
}

// A derived dimension (torch.export's 2*dx) is sized from its root: bound by another
// dimension, or solved from the sample where it is the only one. It was refused, and the
// refusal registered a failing test with no compiler bug.
TEST(ShapePoints, ADerivedDimensionIsSizedFromItsRoot) {
  Program p = Load(FLAGS_dynamic_batch);
  const std::string batch = BatchSymbol(p);
  p.tensor_values.at(p.Signature().user_inputs.at(0).name).sizes.at(0).sym =
      "Mul(Integer(2), Symbol('" + batch + "', positive=True, integer=True))";
  p.range_constraints[batch] = {1, 32};
  const std::vector<ShapePoint> points = ShapePoints(p, {at::randn({8, 12})});
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].symbols.at(batch), 1);
  EXPECT_THAT(points[0].sizes, ElementsAre(ElementsAre(2, 12)));
  EXPECT_EQ(points[1].name, "max");
  EXPECT_THAT(points[1].sizes, ElementsAre(ElementsAre(64, 12)));
}

TEST(ShapePoints, AnExpressionOfTwoUnboundSymbolsIsRefusedByName) {
  Program p = Load(FLAGS_dynamic_batch);
  p.tensor_values.at(p.Signature().user_inputs.at(0).name).sizes.at(0).sym =
      "Mul(Symbol('s0', positive=True, integer=True), Symbol('s1', positive=True, integer=True))";
  try {
    ShapePoints(p, {at::randn({8, 12})});
    FAIL() << "no error for an expression of two unbound symbols";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("Symbol('s0'"), HasSubstr("no other dimension binds"), HasSubstr("shapes")));
  }
}

TEST(ParseShapes, ATeamsOwnShapes) {
  const std::vector<ShapePoint> points = ParseShapes("long=2x64/2x64,scalar=3x4/", 2);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].name, "long");
  EXPECT_THAT(points[0].sizes, ElementsAre(ElementsAre(2, 64), ElementsAre(2, 64)));
  EXPECT_THAT(points[1].sizes, ElementsAre(ElementsAre(3, 4), ElementsAre()));
  EXPECT_TRUE(ParseShapes("", 2).empty());
  for (const char* bad : {"long=2x64", "long=2xz/2", "=2/2", "a=1/1,a=2/2", "long 2x64/2x64"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(ParseShapes(bad, 2), HarnessError);
  }
}

TEST(InputsAt, ThePackagesOwnRule) {
  const at::Tensor floats = at::rand({4, 8}) * 3 - 1;     // values in [-1, 2]
  const at::Tensor ids = at::randint(5, 100, {4, 8});     // token ids in [5, 99]
  const at::Tensor mask = at::ones({4, 8}, at::kLong);     // all ones
  ShapePoint point;
  point.sizes = {{2, 32}, {2, 32}, {2, 32}};
  const auto made = InputsAt(point, {floats, ids, mask}, 0);
  ASSERT_EQ(made.size(), 3u);
  for (const auto& t : made) EXPECT_EQ(t.sizes(), at::IntArrayRef({2, 32}));
  EXPECT_EQ(made[0].scalar_type(), at::kFloat);
  EXPECT_GE(made[0].min().item<double>(), floats.min().item<double>());
  EXPECT_LE(made[0].max().item<double>(), floats.max().item<double>());
  EXPECT_EQ(made[1].scalar_type(), at::kLong);
  EXPECT_GE(made[1].min().item<int64_t>(), ids.min().item<int64_t>());
  EXPECT_LE(made[1].max().item<int64_t>(), ids.max().item<int64_t>());
  EXPECT_TRUE(at::equal(made[2], at::ones({2, 32}, at::kLong)));
  // The same seed, the same inputs.
  EXPECT_TRUE(at::equal(InputsAt(point, {floats, ids, mask}, 0)[0], made[0]));
}

// Integer inputs with structure: what the operators that read them require, found in the
// program (through the views that keep their values).
TEST(InputRoles, IdsOffsetsPositionsAndAnIndexAreReadFromTheProgram) {
  const Program p = Load(FLAGS_embedding_bag);
  const std::vector<InputRole> roles = InputRoles(p);
  ASSERT_EQ(roles.size(), 5u);
  EXPECT_EQ(roles[0].kind, InputRole::Kind::kFree);  // floats
  EXPECT_EQ(roles[1].kind, InputRole::Kind::kIndex);
  EXPECT_EQ(roles[1].bound.size, 100);
  EXPECT_THAT(roles[1].why, HasSubstr("indices of node"));
  EXPECT_EQ(roles[2].kind, InputRole::Kind::kOffsets);
  EXPECT_THAT(roles[2].why, HasSubstr("offsets of node"));
  ASSERT_EQ(roles[2].ids_sizes.size(), 1u);
  EXPECT_TRUE(roles[2].ids_sizes[0].is_symbolic());
  EXPECT_FALSE(roles[2].include_last);
  EXPECT_EQ(roles[3].kind, InputRole::Kind::kIndex);
  EXPECT_EQ(roles[3].bound.size, 64);
  EXPECT_EQ(roles[4].kind, InputRole::Kind::kIndex);
  EXPECT_TRUE(roles[4].bound.is_symbolic()) << "index_select's index is bound by the dense input's dynamic width";
}

// At every shape point the inputs made by the roles run in eager: offsets start at 0, rise
// and stay within the ids, ids stay in the table, the index stays within the width, the
// positions count up. Made by the sample's range alone, eager refuses some point's inputs.
TEST(InputRoles, InputsMadeByTheRolesRunInEagerAtEveryPoint) {
  auto archive = Pt2Archive::Open(FLAGS_embedding_bag);
  const Program p = Load(FLAGS_embedding_bag);
  const std::vector<at::Tensor> sample = archive->SampleInputsOnCpu();
  const std::vector<ShapePoint> points = ShapePoints(p, sample);
  ASSERT_GE(points.size(), 2u);
  const std::vector<InputRole> roles = InputRoles(p);
  int refused_without = 0;
  for (const ShapePoint& point : points) {
    SCOPED_TRACE("shape " + point.name);
    const std::vector<at::Tensor> made = InputsAt(point, sample, 0, roles);
    ASSERT_EQ(made.size(), 5u);
    const at::Tensor ids = made[1], offsets = made[2], positions = made[3], cols = made[4];
    EXPECT_EQ(offsets[0].item<int64_t>(), 0);
    EXPECT_TRUE((offsets.diff() >= 0).all().item<bool>()) << offsets;
    EXPECT_LE(offsets.max().item<int64_t>(), ids.numel());
    EXPECT_LT(ids.max().item<int64_t>(), 100);
    EXPECT_LT(cols.max().item<int64_t>(), made[0].size(1));
    EXPECT_TRUE(at::equal(positions[0], at::arange(positions.size(1), positions.options()))) << positions;
    EXPECT_NO_THROW(Interpreter::FromArchive(*archive, archive->ResolveModelName(""))->RunTensors(made));
    try {
      Interpreter::FromArchive(*archive, archive->ResolveModelName(""))->RunTensors(InputsAt(point, sample, 0));
    } catch (const OperatorError&) {
      ++refused_without;
    }
  }
  EXPECT_GT(refused_without, 0) << "the sample's range alone made valid inputs everywhere: the test proves nothing";
}

// Offsets that must start at 0 and end at the ids' count in one value cannot be made: the
// point is skipped with the input named, not failed.
TEST(InputRoles, OffsetsThatCannotBeMadeNameTheInput) {
  auto archive = Pt2Archive::Open(FLAGS_embedding_bag);
  const Program p = Load(FLAGS_embedding_bag);
  std::vector<InputRole> roles = InputRoles(p);
  roles[2].include_last = true;
  ShapePoint point = ShapePoints(p, archive->SampleInputsOnCpu()).at(0);
  point.sizes[2] = {1};
  EXPECT_THROW(
      {
        try {
          InputsAt(point, archive->SampleInputsOnCpu(), 0, roles);
        } catch (const InputsCannotBeMade& e) {
          EXPECT_THAT(e.what(), AllOf(HasSubstr("user input 2"), HasSubstr("offsets of node")));
          throw;
        }
      },
      InputsCannotBeMade);
}

}  // namespace
}  // namespace aoti
