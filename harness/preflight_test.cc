// Preflight against synthetic hosts and real programs: each problem names the input or
// setting, what was expected and what was given.
#include "harness/preflight.h"

#include <ATen/ops/randn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/pt2_archive.h"

namespace aoti {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

HostInfo Avx2Host() {
  HostInfo h;
  h.platform = "linux";
  h.machine = "x86_64";
  h.cpu_flags = {"sse4_2", "avx", "avx2", "fma", "f16c"};
  return h;
}

std::map<std::string, std::string> CpuPackage(const std::string& isa) {
  return {{"AOTI_DEVICE_KEY", "cpu"}, {"AOTI_PLATFORM", "linux"}, {"AOTI_MACHINE", "x86_64"}, {"AOTI_CPU_ISA", isa}};
}

TEST(RequiredCpuFlags, MapsInductorIsaNamesToCpuinfoFlags) {
  std::vector<std::string> unknown;
  EXPECT_THAT(RequiredCpuFlags("AVX512 AVX512_VNNI", &unknown),
              UnorderedElementsAre("avx512f", "avx512dq", "avx512vl", "avx512bw", "fma", "avx512_vnni"));
  EXPECT_THAT(RequiredCpuFlags("AVX2", &unknown), UnorderedElementsAre("avx2", "fma", "f16c"));
  EXPECT_THAT(RequiredCpuFlags("ASIMD", &unknown), ElementsAre("asimd"));
  EXPECT_THAT(unknown, IsEmpty());
  RequiredCpuFlags("ZVECTOR", &unknown);
  EXPECT_THAT(unknown, ElementsAre("ZVECTOR"));
}

TEST(CheckPackageAgainstHost, Avx512PackageOnAnAvx2Host) {
  const auto problems = CheckPackageAgainstHost(CpuPackage("AVX512 AVX512_VNNI"), Avx2Host());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0],
            "CPU ISA: the package's kernels were compiled for AVX512 AVX512_VNNI, and this CPU lacks "
            "avx512_vnni avx512bw avx512dq avx512f avx512vl (running it would die of SIGILL); rebuild "
            "the package on this host's ISA");
}

TEST(CheckPackageAgainstHost, Avx2PackageOnAnAvx2HostIsFine) {
  EXPECT_THAT(CheckPackageAgainstHost(CpuPackage("AVX2"), Avx2Host()), IsEmpty());
}

TEST(CheckPackageAgainstHost, CudaPackageOnACpuOnlyHost) {
  auto metadata = CpuPackage("");
  metadata["AOTI_DEVICE_KEY"] = "cuda";
  const auto problems = CheckPackageAgainstHost(metadata, Avx2Host());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0], HasSubstr("device: the package was compiled for cuda, and this host has no CUDA device"));
}

TEST(CheckPackageAgainstHost, OtherMachineAndMissingDevice) {
  auto metadata = CpuPackage("ASIMD");
  metadata["AOTI_MACHINE"] = "aarch64";
  EXPECT_THAT(CheckPackageAgainstHost(metadata, Avx2Host()),
              testing::Contains("machine: the package was compiled for aarch64, this host is x86_64"));
  metadata.erase("AOTI_DEVICE_KEY");
  EXPECT_THAT(CheckPackageAgainstHost(metadata, Avx2Host()),
              testing::Contains(HasSubstr("has no AOTI_DEVICE_KEY")));
}

TEST(CheckPackageAgainstHost, ThisHostRunsItsOwnPackages) {
  auto archive = Pt2Archive::Open("testdata/mlp.pt2");
  EXPECT_THAT(CheckPackageAgainstHost(archive->AotiMetadata("model"), DetectHost()), IsEmpty());
}

TEST(CheckInputs, DynamicDimensionsRespectTheirRange) {
  auto archive = Pt2Archive::Open("testdata/corpus/dynamic_batch.pt2");
  const Program program = Program::Parse(archive->ProgramJson("model"), archive->path());
  EXPECT_THAT(CheckInputs(program, {at::randn({5, 12})}, "cpu"), IsEmpty());
  const auto low = CheckInputs(program, {at::randn({1, 12})}, "cpu");
  ASSERT_EQ(low.size(), 1u);
  EXPECT_THAT(low[0], HasSubstr("input 0 'x': dim 0 (s"));
  EXPECT_THAT(low[0], HasSubstr(") is 1, outside the exported range [2, 64]"));
  EXPECT_THAT(CheckInputs(program, {at::randn({70, 12})}, "cpu"),
              ElementsAre(HasSubstr("is 70, outside the exported range [2, 64]")));
  EXPECT_THAT(CheckInputs(program, {at::randn({5, 11})}, "cpu"),
              ElementsAre(HasSubstr("dim 1 is 11, expected 12")));
}

TEST(CheckInputs, RankAndUndefined) {
  auto archive = Pt2Archive::Open("testdata/mlp.pt2");
  const Program program = Program::Parse(archive->ProgramJson("model"), archive->path());
  EXPECT_THAT(CheckInputs(program, {at::randn({8, 32, 1})}, "cpu"),
              ElementsAre("input 0 'x': has shape [8, 32, 1] (3-D), expected [8, 32] (2-D)"));
  EXPECT_THAT(CheckInputs(program, {at::Tensor()}, "cpu"), ElementsAre("input 0 'x': is an undefined tensor"));
}

}  // namespace
}  // namespace aoti
