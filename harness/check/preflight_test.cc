// Preflight against synthetic hosts and real programs: each problem names the input or
// setting, what was expected and what was given.
#include "harness/check/preflight.h"

#include <ATen/ops/randn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <tuple>

#include "harness/util/errors.h"
#include "harness/archive/pt2_archive.h"

namespace aoti {
namespace {

using ::testing::AllOf;
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

// A host with one GPU as the CUDA driver describes it.
HostInfo GpuHost(int major, int minor, int driver_version, int runtime_version, bool harness_has_cuda = true) {
  HostInfo h = Avx2Host();
  h.has_cuda = harness_has_cuda;
  h.cuda.driver_version = driver_version;
  h.cuda.runtime_version = runtime_version;
  h.cuda.gpus = {GpuInfo{"NVIDIA Test GPU", major, minor}};
  return h;
}

std::map<std::string, std::string> CudaPackage(const std::string& compute_capability) {
  auto metadata = CpuPackage("AVX2");
  metadata["AOTI_DEVICE_KEY"] = "cuda";
  metadata["AOTI_COMPUTE_CAPABILITY"] = compute_capability;
  return metadata;
}

TEST(CheckPackageAgainstHost, CudaPackageOnItsOwnKindOfGpuIsFine) {
  EXPECT_THAT(CheckPackageAgainstHost(CudaPackage("90"), GpuHost(9, 0, 13000, 13000), "13.0"), IsEmpty());
  // A cubin for 8.0 runs on 8.6 (same major, newer minor).
  EXPECT_THAT(CheckPackageAgainstHost(CudaPackage("80"), GpuHost(8, 6, 13000, 13000), "13.0"), IsEmpty());
}

TEST(CheckPackageAgainstHost, CudaPackageWhereTheDriverShowsNoGpu) {
  HostInfo h = Avx2Host();
  h.cuda.driver_error = "no CUDA driver (libcuda.so.1: cannot open shared object file)";
  const auto problems = CheckPackageAgainstHost(CudaPackage("90"), h, "13.0");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0], AllOf(HasSubstr("compiled for cuda, and this host has no CUDA device"),
                                 HasSubstr("libcuda.so.1: cannot open shared object file")));
}

TEST(CheckPackageAgainstHost, CudaPackageWithAGpuButACpuOnlyHarness) {
  const auto problems = CheckPackageAgainstHost(CudaPackage("90"), GpuHost(9, 0, 13000, 0, false), "13.0");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0], AllOf(HasSubstr("this host has 1 GPU(s) (NVIDIA Test GPU)"),
                                 HasSubstr("links a CPU-only torch"), HasSubstr("--config=cuda")));
}

TEST(CheckPackageAgainstHost, KernelsForAnotherGpuArchitectureAreRefused) {
  for (const auto& [package, major, minor] : {std::tuple<std::string, int, int>{"90", 8, 0}, {"86", 8, 0}, {"80", 9, 0}}) {
    SCOPED_TRACE(package);
    const auto problems = CheckPackageAgainstHost(CudaPackage(package), GpuHost(major, minor, 13000, 13000), "13.0");
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_THAT(problems[0], AllOf(HasSubstr("compiled for sm_" + package),
                                   HasSubstr("cuda:0 (NVIDIA Test GPU) is sm_" + std::to_string(major * 10 + minor)),
                                   HasSubstr("rebuild the package")));
  }
  EXPECT_THAT(CheckPackageAgainstHost(CudaPackage("ninety"), GpuHost(9, 0, 13000, 13000), "13.0"),
              testing::Contains(HasSubstr("AOTI_COMPUTE_CAPABILITY is 'ninety'")));
}

TEST(CheckPackageAgainstHost, CudaVersionsMustFitTheDriver) {
  // A CUDA 13 package and harness on a driver for CUDA 12.4.
  const auto old_driver = CheckPackageAgainstHost(CudaPackage("90"), GpuHost(9, 0, 12040, 13000), "13.0");
  ASSERT_EQ(old_driver.size(), 2u);
  EXPECT_THAT(old_driver[0], AllOf(HasSubstr("the package was built by a torch with CUDA 13.0"),
                                   HasSubstr("driver supports CUDA up to 12.4"), HasSubstr("update the driver")));
  EXPECT_THAT(old_driver[1], HasSubstr("the harness runs a torch with CUDA 13.0"));
  // A CUDA 12.8 package under a CUDA 13 harness.
  const auto mixed = CheckPackageAgainstHost(CudaPackage("90"), GpuHost(9, 0, 13000, 13000), "12.8");
  ASSERT_EQ(mixed.size(), 1u);
  EXPECT_THAT(mixed[0], AllOf(HasSubstr("built by a torch with CUDA 12.8"), HasSubstr("runs a torch with CUDA 13.0"),
                              HasSubstr("build the package with the torch the harness links")));
  // Minor versions within a major are compatible; an unknown package version is not judged.
  EXPECT_THAT(CheckPackageAgainstHost(CudaPackage("90"), GpuHost(9, 0, 13020, 13000), "13.1"), IsEmpty());
  EXPECT_THAT(CheckPackageAgainstHost(CudaPackage("90"), GpuHost(9, 0, 13000, 13000), ""), IsEmpty());
  EXPECT_THAT(CheckPackageAgainstHost(CudaPackage("90"), GpuHost(9, 0, 13000, 13000), "thirteen"),
              testing::Contains(HasSubstr("'thirteen' is not a CUDA version")));
}

TEST(CudaVersion, NumbersAndNames) {
  EXPECT_EQ(CudaVersionNumber("13.0", "v"), 13000);
  EXPECT_EQ(CudaVersionNumber("12.8", "v"), 12080);
  EXPECT_EQ(CudaVersionNumber("", "v"), 0);
  EXPECT_EQ(CudaVersionName(12040), "12.4");
  EXPECT_THROW(CudaVersionNumber("13", "v"), HarnessError);
}

TEST(DetectCudaHost, ACudaPackageOnThisHostSaysWhyItCannotRun) {
  // This host, as detected: without a GPU (or with one, under a CPU build) a CUDA package
  // gets one device problem that says which.
  const HostInfo host = DetectHost();
  if (host.has_cuda) GTEST_SKIP() << "this process can run CUDA; the refusal needs a host without it";
  const auto problems = CheckPackageAgainstHost(CudaPackage("90"), host, "13.0");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0], HasSubstr("device: the package was compiled for cuda"));
  EXPECT_THAT(problems[0], host.cuda.gpus.empty() ? HasSubstr("no CUDA device") : HasSubstr("links a CPU-only torch"));
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

// The compile cache's key holds the CPU flags that change AOTI's code, not the ones that
// differ between machines of one fleet: two VMs of one CPU model, one with another
// hypervisor's and mitigations' flags, share entries; one without AVX-512 does not.
TEST(CodegenCpuFlags, MachinesOfOneFleetShareAndAnotherIsaDoesNot) {
  const std::set<std::string> a = {"fpu", "sse4_2", "avx2", "fma", "f16c", "avx512f", "avx512bw", "amx_tile",
                                   "hypervisor", "constant_tsc", "md_clear", "flush_l1d", "arch_perfmon", "rep_good"};
  std::set<std::string> b = a;
  for (const char* f : {"hypervisor", "md_clear", "flush_l1d", "rep_good"}) b.erase(f);
  b.insert({"nonstop_tsc", "ibrs", "stibp", "tsc_known_freq"});
  EXPECT_EQ(CodegenCpuFlags(a), CodegenCpuFlags(b));
  EXPECT_EQ(CodegenCpuFlags(a), "amx_tile avx2 avx512bw avx512f f16c fma fpu sse4_2");
  std::set<std::string> no_avx512 = a;
  no_avx512.erase("avx512f");
  no_avx512.erase("avx512bw");
  EXPECT_NE(CodegenCpuFlags(a), CodegenCpuFlags(no_avx512));
  EXPECT_EQ(CodegenCpuFlags({"fp", "asimd", "sve", "sve2", "cpuid", "evtstrm"}), "asimd fp sve sve2");
}

}  // namespace
}  // namespace aoti
