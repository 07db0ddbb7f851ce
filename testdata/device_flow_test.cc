// The device a package was built for travels through every step, tested on a CPU-only
// host with a CUDA package made from a real CPU one: the mlp package with its AOTI
// metadata, its manifest's inputs and its weights' tensor_meta rewritten as a GPU host
// writes them (AOTI_DEVICE_KEY cuda, sm_90, inputs on cuda:0, CUDA 13.0). On such a host:
//   - the check stops at the preflight, naming the device, not as a harness error;
//   - the archive reports each input's device and reads its values on the CPU on request;
//   - the interpreter places weights where they were recorded, or all on one device;
//   - candidates keep the package's CUDA version and each input's device;
//   - the repro knows its device: repro.py refuses clearly without CUDA, and the Bazel
//     repro is tagged requires-gpu.
// No new compile: it uses the mlp package that other tests share.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <ATen/ATen.h>
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plugin/check_flags.h"
#include "harness/archive/archive_rewrite.h"
#include "harness/check/check.h"
#include "harness/util/errors.h"
#include "plugin/flags.h"
#include "harness/program/interpreter.h"
#include "harness/check/preflight.h"
#include "harness/program/program.h"
#include "harness/archive/pt2_archive.h"
#include "harness/archive/tensor_io.h"
#include "matchers/aoti_matches_eager.h"
#include "reducer/artifacts.h"
#include "reducer/candidate_archive.h"

DECLARE_string(aoti_python);

namespace aoti {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The mlp package as a GPU host would have written it.
std::string AsCudaPackage(const std::string& package) {
  auto archive = Pt2Archive::Open(package);
  const std::string copy = std::string(std::getenv("TEST_TMPDIR")) + "/mlp_cuda.pt2";
  RewriteArchive(*archive, copy, [](const std::string& rec, std::string* data) {
    if (EndsWith(rec, "_metadata.json")) {
      json j = json::parse(*data);
      j["AOTI_DEVICE_KEY"] = "cuda";
      j["AOTI_COMPUTE_CAPABILITY"] = "90";
      *data = j.dump();
    } else if (rec == "extra/aoti_harness/package.json") {
      json j = json::parse(*data);
      for (auto& t : j["inputs"]) t["device"] = "cuda:0";
      j["cuda_version"] = "13.0";
      *data = j.dump(1);
    } else if (EndsWith(rec, "_weights_config.json") || EndsWith(rec, "_constants_config.json")) {
      json j = json::parse(*data);
      for (auto& [fqn, meta] : j["config"].items()) meta["tensor_meta"]["device"] = {{"type", "cuda"}, {"index", 0}};
      *data = j.dump();
    }
    return true;
  });
  return copy;
}

class DeviceFlow : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cuda_package_ = new std::string(AsCudaPackage(FLAGS_aoti_package)); }
  void SetUp() override {
    if (DetectHost().has_cuda) GTEST_SKIP() << "this process can run CUDA; these tests are for a host without it";
  }
  static std::string* cuda_package_;
};
std::string* DeviceFlow::cuda_package_ = nullptr;

TEST_F(DeviceFlow, ACudaPackageOnThisHostIsAPreflightFailureNamingTheDevice) {
  CheckReport report;
  const ::testing::AssertionResult result = AotiMatchesEager(*cuda_package_, nullptr, CheckOptionsFromFlags(), &report);
  ASSERT_FALSE(result);
  EXPECT_EQ(report.failure_class, "preflight") << report.message;
  EXPECT_THAT(report.message, AllOf(HasSubstr("device: the package was compiled for cuda"),
                                    HasSubstr("its inputs were not checked")));
  ASSERT_FALSE(report.diagnoses.empty());
  EXPECT_EQ(report.diagnoses.front().id, "device_mismatch");
}

TEST_F(DeviceFlow, TheArchiveKnowsEachInputsDevice) {
  auto archive = Pt2Archive::Open(*cuda_package_);
  EXPECT_THAT(archive->SampleInputDevices(), ElementsAre("cuda:0"));
  EXPECT_EQ(archive->DeviceType("model"), "cuda");
  EXPECT_EQ(archive->Manifest()->cuda_version, "13.0");
  try {
    archive->SampleInputs();
    FAIL() << "expected a HarnessError: the inputs belong on cuda:0";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("sample input 0 'x'"), HasSubstr("recorded on cuda:0"),
                                HasSubstr("no CUDA device")));
  }
  const auto on_cpu = archive->SampleInputsOnCpu();
  ASSERT_EQ(on_cpu.size(), 1u);
  EXPECT_TRUE(at::equal(on_cpu[0], Pt2Archive::Open(FLAGS_aoti_package)->SampleInputs()[0]));
}

TEST_F(DeviceFlow, TheInterpreterPlacesWeightsWhereTheyWereRecordedOrWhereItIsTold) {
  auto archive = Pt2Archive::Open(*cuda_package_);
  try {
    Interpreter::FromArchive(*archive, "model");
    FAIL() << "expected a HarnessError: the weights belong on cuda:0";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("recorded on cuda:0"), HasSubstr("data/weights/")));
  }
  // Told to run on the CPU (the float64 reference of a device without float64 kernels):
  // the same values as the CPU package's own interpreter, in eager and in float64.
  auto cpu_archive = Pt2Archive::Open(FLAGS_aoti_package);
  const auto inputs = archive->SampleInputsOnCpu();
  for (const bool fp64 : {false, true}) {
    SCOPED_TRACE(fp64 ? "fp64" : "eager");
    InterpreterOptions on_cpu;
    on_cpu.device = "cpu";
    on_cpu.fp64 = fp64;
    InterpreterOptions plain;
    plain.fp64 = fp64;
    const auto got = Interpreter::FromArchive(*archive, "model", on_cpu)->RunTensors(inputs);
    const auto want = Interpreter::FromArchive(*cpu_archive, "model", plain)->RunTensors(inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(got[i].device().is_cpu());
      EXPECT_TRUE(at::equal(got[i], want[i]));
    }
  }
  InterpreterOptions on_meta;
  on_meta.device = "meta";
  EXPECT_THROW(Interpreter::FromArchive(*cpu_archive, "model", on_meta), HarnessError);
}

TEST_F(DeviceFlow, CandidatesKeepTheCudaVersionAndEachInputsDevice) {
  auto archive = Pt2Archive::Open(*cuda_package_);
  const Program program = Program::Parse(archive->ProgramJson("model"), *cuda_package_);
  const std::string out = std::string(std::getenv("TEST_TMPDIR")) + "/candidate.pt2";
  WriteCandidateArchive(*archive, "model", program, archive->SampleInputsOnCpu(), "{}", out);
  auto candidate = Pt2Archive::Open(out);
  EXPECT_EQ(candidate->Manifest()->cuda_version, "13.0");
  // The candidate's inputs were CPU tensors here; each record says where its tensor was.
  EXPECT_THAT(candidate->SampleInputDevices(), ElementsAre("cpu"));
  const json manifest = json::parse(candidate->ReadRecord("extra/aoti_harness/package.json"));
  EXPECT_EQ(manifest.at("inputs").at(0).at("device"), "cpu");
}

TEST_F(DeviceFlow, TheReproOfACudaPackageKnowsItsDevice) {
  auto archive = Pt2Archive::Open(*cuda_package_);
  ReduceResult r;
  r.original = r.minimal = Program::Parse(archive->ProgramJson("model"), *cuda_package_);
  r.failure_class = "accuracy";
  r.message = "output 0 differs";
  r.final_archive = *cuda_package_;
  r.inductor_configs_json = R"({"triton.inject_relu_bug_TESTING_ONLY": "accuracy"})";
  r.nodes_before = r.nodes_after = r.minimal.nodes.size();
  ReduceSpec spec;
  spec.package = *cuda_package_;
  const fs::path out = fs::path(std::getenv("TEST_TMPDIR")) / "cuda_repro";
  WriteArtifacts(r, spec, ReduceOptions(), out.string());
  EXPECT_EQ(json::parse(Read(out / "case.json")).at("device"), "cuda");
  const std::string repro = Read(out / "repro.py");
  EXPECT_THAT(repro, HasSubstr("DEVICE = \"cuda\""));
  const std::string build = Read(out / "BUILD.bazel");
  size_t tagged = 0;
  const std::string tag = "tags = [\"requires-gpu\"]";
  for (size_t p = build.find(tag); p != std::string::npos; p = build.find(tag, p + 1)) ++tagged;
  EXPECT_EQ(tagged, 2u) << build;
  // Run where there is no CUDA, repro.py says so and exits 3 ("cannot run here"), as for a
  // torch that cannot load it: bisect-torch records a skip, not a failure.
  ASSERT_FALSE(FLAGS_aoti_python.empty());
  const std::string log = (out / "repro.log").string();
  const int status = std::system((FLAGS_aoti_python + " " + (out / "repro.py").string() + " > " + log + " 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3) << Read(log);
  EXPECT_THAT(Read(log), AllOf(HasSubstr("the repro runs on cuda, and this torch"), HasSubstr("cannot run here")));
}

}  // namespace
}  // namespace aoti
