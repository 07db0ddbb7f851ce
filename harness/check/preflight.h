// Preflight: before the compiled model runs, check what would otherwise end in a crash
// or an AOTI-internal message:
//   - the package's compile device against this host (a CUDA package on a CPU-only host);
//   - the package's platform and machine against this host;
//   - the package's CPU ISA (AOTI_CPU_ISA) against this CPU's flags: AVX-512 kernels on
//     an AVX2-only CPU die of SIGILL;
//   - for a CUDA package: a GPU this process can use, the kernels' SM architecture
//     (AOTI_COMPUTE_CAPABILITY) against the GPU's compute capability, and the CUDA
//     versions (the package's, this process's runtime, the driver's) against each other;
//   - each input's device, dtype, rank, sizes (respecting the ranges of dynamic
//     dimensions and using each symbol consistently) and strides against the program.
// Each problem is one line that names the input or setting, what was expected and what
// was given.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "harness/program/program.h"

namespace aoti {

struct GpuInfo {
  std::string name;  // "NVIDIA H200"
  int major = 0;     // compute capability 9.0: major 9, minor 0
  int minor = 0;
};

// CudaHost: what the CUDA driver says, read through libcuda.so.1 (loaded at run time, so
// a CPU build asks it too: "a GPU is there, but this harness links no CUDA").
struct CudaHost {
  std::string driver_error;     // why the driver could not be asked ("" when it answered)
  int driver_version = 0;       // cuDriverGetVersion: 13000 is CUDA 13.0
  std::vector<GpuInfo> gpus;    // the devices the driver shows (CUDA_VISIBLE_DEVICES applies)
  int runtime_version = 0;      // the CUDA runtime of the torch in this process (0: a CPU build)
};

struct HostInfo {
  std::string platform = "linux";
  std::string machine;               // uname -m
  std::set<std::string> cpu_flags;   // from /proc/cpuinfo ("flags" or "Features")
  bool has_cuda = false;             // this process can run CUDA (at::hasCUDA())
  CudaHost cuda;
};

// DetectHost reads this machine's facts (the CUDA ones once per process).
HostInfo DetectHost();
CudaHost DetectCudaHost();

// CodegenCpuFlags: the CPU flags that change the code AOTI generates and g++ builds
// (-march=native and inductor's vector ISA): the instruction set extensions (SSE to
// AVX-512 and AMX, FMA, F16C, BMI, ...; NEON, SVE, ... on ARM), in a stable order. Not the
// flags that differ between machines of one fleet and change no code (hypervisor, the
// timestamp counter's, the mitigations'): a compile cache keyed by these is shared.
std::string CodegenCpuFlags(const std::set<std::string>& cpu_flags);

// CudaVersionNumber: "13.0" -> 13000, "12.8" -> 12080, as the driver API counts; 0 for "".
// Throws HarnessError naming `what` for anything else.
int CudaVersionNumber(const std::string& version, const std::string& what);
// CudaVersionName: 13000 -> "13.0".
std::string CudaVersionName(int version);

// RequiredCpuFlags: the /proc/cpuinfo flags an AOTI_CPU_ISA value needs, e.g.
// "AVX512 AVX512_VNNI" -> avx512f avx512dq avx512vl avx512bw fma avx512_vnni.
// Unknown ISA names are returned in `unknown`.
std::set<std::string> RequiredCpuFlags(const std::string& isa, std::vector<std::string>* unknown);

// CheckPackageAgainstHost: problems with the AOTI metadata on this host. `cuda_version` is
// the CUDA version of the torch that built the package (the manifest's; "" when unknown).
std::vector<std::string> CheckPackageAgainstHost(const std::map<std::string, std::string>& metadata,
                                                 const HostInfo& host, const std::string& cuda_version = "");

// CheckInputs: problems with `inputs` against the program's user inputs.
// `device` is the package's device key ("cpu", "cuda").
std::vector<std::string> CheckInputs(const Program& program, const std::vector<at::Tensor>& inputs,
                                     const std::string& device);

}  // namespace aoti
