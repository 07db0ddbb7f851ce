// The default test of aoti_model_test: the EXPECT_AOTI_MATCHES_EAGER check on the package named by
// --aoti_package and on each package named by key (--aoti_packages), with its recorded
// sample inputs, and a one-line result per package on stdout.
//
// A package with dynamic dimensions is checked across their ranges too: one test per shape
// (AotiModelShapes.min, .max, .distinct, the team's own from --aoti_shapes, and the points
// the model file's shape_inputs() gave inputs for, which replace the harness' made inputs at
// a point of the same name; prefixed by the package's key), each with its own name in test.xml and its own case, so a failure at
// one shape is reduced at that shape (harness/program/dynamic_shapes.h).
#include <algorithm>
#include <iostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "plugin/check_flags.h"
#include "harness/program/dynamic_shapes.h"
#include "harness/util/errors.h"
#include "plugin/flags.h"
#include "harness/program/program.h"
#include "harness/archive/pt2_archive.h"
#include "plugin/test_hooks.h"
#include "matchers/aoti_matches_eager.h"

namespace aoti {
namespace {

void CheckOne(const std::string& package, const CheckOptions& options, const std::vector<at::Tensor>* inputs = nullptr,
              const std::string& at = "") {
  CheckReport report;
  const ::testing::AssertionResult result = AotiMatchesEager(package, inputs, options, &report);
  std::cout << "[aoti] " << (report.package_name.empty() ? package : report.package_name) << at << ": "
            << (report.pass ? "compiled matches eager"
                            : "FAILED (" + report.failure_class +
                                  (report.diagnoses.empty() ? "" : ", diagnosis " + report.diagnoses.front().id) + ")");
  for (size_t i = 0; i < report.comparisons.size(); ++i) {
    const auto& c = report.comparisons[i];
    std::cout << (i ? "; " : " -- ") << "output " << i << " " << c.reason << ", max |compiled-eager| "
              << c.max_abs_diff;
  }
  if (!report.fp64_note.empty()) std::cout << " (" << report.fp64_note << ")";
  if (!report.accuracy_note.empty()) std::cout << " (" << report.accuracy_note << ")";
  std::cout << "\n";
  // The message once (EXPECT_TRUE would print it twice: as the value and as the note).
  if (!result) ADD_FAILURE() << result.message();
}

// The packages under test: (key, path), the unkeyed --aoti_package first.
std::vector<std::pair<std::string, std::string>> Packages() {
  std::vector<std::pair<std::string, std::string>> packages;
  if (!FLAGS_aoti_package.empty()) packages.emplace_back("", FLAGS_aoti_package);
  for (const auto& key : PackageKeys()) packages.emplace_back(key, PackageUnderTest(key));
  return packages;
}

TEST(AotiModel, CompiledMatchesEager) {
  std::vector<std::pair<std::string, std::string>> packages;  // (key, path)
  try {
    packages = Packages();
  } catch (const HarnessError& e) {
    FAIL() << e.what();
  }
  ASSERT_FALSE(packages.empty()) << "pass --aoti_package=<path to .pt2> (or --aoti_packages=KEY=PATH,...)";
  CheckOptions options;
  try {
    options = CheckOptionsFromFlags();
  } catch (const HarnessError& e) {
    FAIL() << e.what();
  }
  for (const auto& [key, path] : packages) {
    SCOPED_TRACE(key.empty() ? "package " + path : "package '" + key + "': " + path);
    CheckOne(path, options);
  }
}

std::string Describe(const ShapePoint& point) {
  std::string s;
  for (const auto& sizes : point.sizes) {
    s += s.empty() ? "" : ", ";
    for (size_t d = 0; d < sizes.size(); ++d) s += (d ? "x" : "") + std::to_string(sizes[d]);
  }
  for (const auto& [sym, v] : point.symbols) s += " " + sym + "=" + std::to_string(v);
  if (!point.what.empty()) s += "; " + point.what;
  return s;
}

// One package at one shape: inputs made by the package's rule at that shape.
class ShapeCheck : public ::testing::Test {
 public:
  ShapeCheck(std::string package, ShapePoint point, std::vector<InputRole> roles, bool given)
      : package_(std::move(package)), point_(std::move(point)), roles_(std::move(roles)), given_(given) {}
  void TestBody() override {
    CheckOptions options;
    std::vector<at::Tensor> inputs;
    RecordProperty("aoti_shape", Describe(point_));
    try {
      options = CheckOptionsFromFlags();
      if (given_) {
        // The model file's own inputs at this point (its shape_inputs()), as the package holds them.
        inputs = Pt2Archive::Open(package_)->ShapeInputs(point_.name);
        options.inputs_from = "given by the model file's shape_inputs() for shape '" + point_.name + "' (" +
                              Describe(point_) + ")";
        CheckOne(package_, options, &inputs, " at shape " + point_.name + " (" + Describe(point_) + ")");
        return;
      }
      inputs = InputsAt(point_, SampleInputs(package_), /*seed=*/0, roles_);
    } catch (const InputsCannotBeMade& e) {
      // Not the compiler's failure, nor the model's: no valid inputs exist at this point.
      std::cout << "[aoti] " << package_ << " at shape " << point_.name << ": skipped: no valid inputs: " << e.what()
                << "\n";
      RecordProperty("aoti_shape_skipped", e.what());
      GTEST_SKIP() << "shape " << point_.name << " skipped: the harness cannot make valid inputs there: " << e.what();
    } catch (const HarnessError& e) {
      FAIL() << e.what();
    }
    options.inputs_from = "made by the harness at shape '" + point_.name + "' (" + Describe(point_) +
                          ") from the sample inputs" + (roles_.empty() ? "" : ", by what the program's operators require");
    CheckOne(package_, options, &inputs, " at shape " + point_.name + " (" + Describe(point_) + ")");
  }

 private:
  std::string package_;
  ShapePoint point_;
  std::vector<InputRole> roles_;
  bool given_;
};

// GivenPoint: a shape point the model file gave inputs for (shape_inputs()), sized by them.
ShapePoint GivenPoint(const std::string& name, const std::vector<TensorRecord>& records) {
  ShapePoint p;
  p.name = name;
  for (const auto& r : records) p.sizes.push_back(r.sizes);
  p.what = "the model file's own inputs";
  return p;
}

// A planning problem (a dimension this planner cannot size, a malformed --aoti_shapes) is a
// failing test of its own, with the reason.
class ShapePlanningFailed : public ::testing::Test {
 public:
  explicit ShapePlanningFailed(std::string why) : why_(std::move(why)) {}
  void TestBody() override { FAIL() << why_; }

 private:
  std::string why_;
};

void RegisterShapeChecks() {
  std::vector<std::pair<std::string, std::string>> packages;
  try {
    packages = Packages();
  } catch (const HarnessError&) {
    return;  // AotiModel.CompiledMatchesEager says what is wrong
  }
  for (const auto& [key, path] : packages) {
    const std::string prefix = key.empty() ? "" : key + "_";
    std::vector<ShapePoint> points;
    std::vector<InputRole> roles;
    std::set<std::string> given;
    try {
      auto archive = Pt2Archive::Open(path);
      if (!archive->Manifest() || archive->Manifest()->compile.status == "export_error") continue;
      // A package without its program (torch could not write it) is judged at its sample
      // inputs only, against Python's recordings: there is no program to plan shapes from.
      const std::string model = archive->ResolveModelName(FLAGS_aoti_model_name);
      if (!archive->ProgramNotHeld(model).empty()) continue;
      const Program program = Program::Parse(archive->ProgramJson(model), path);
      points = ShapePoints(program, archive->SampleInputsOnCpu(), FLAGS_aoti_shapes_max_mb << 20);
      roles = InputRoles(program);
      for (auto& p : ParseShapes(FLAGS_aoti_shapes, program.Signature().user_inputs.size())) points.push_back(p);
      // The model file's own inputs replace the harness' at a point of the same name, or add one.
      for (const auto& [name, records] : archive->Manifest()->shape_inputs) {
        auto same = std::find_if(points.begin(), points.end(), [&](const ShapePoint& p) { return p.name == name; });
        if (same != points.end()) points.erase(same);
        given.insert(name);
        points.push_back(GivenPoint(name, records));
      }
    } catch (const std::exception& e) {
      const std::string why = std::string("the shapes to check ") + (key.empty() ? "" : "package '" + key + "' ") +
                              "at could not be planned: " + e.what();
      ::testing::RegisterTest("AotiModelShapes", (prefix + "planning").c_str(), nullptr, nullptr, __FILE__, __LINE__,
                              [why]() -> ::testing::Test* { return new ShapePlanningFailed(why); });
      continue;
    }
    for (const auto& point : points) {
      ::testing::RegisterTest("AotiModelShapes", (prefix + point.name).c_str(), nullptr, Describe(point).c_str(),
                              __FILE__, __LINE__, [path = path, point, roles, g = given.count(point.name) > 0]()
                                  -> ::testing::Test* { return new ShapeCheck(path, point, roles, g); });
    }
  }
}

const bool kShapeChecks = RegisterTestRegistrar(RegisterShapeChecks);

}  // namespace
}  // namespace aoti
