// Preflight: before the compiled model runs, check what would otherwise end in a crash
// or an AOTI-internal message:
//   - the package's compile device against this host (a CUDA package on a CPU-only host);
//   - the package's platform and machine against this host;
//   - the package's CPU ISA (AOTI_CPU_ISA) against this CPU's flags: AVX-512 kernels on
//     an AVX2-only CPU die of SIGILL;
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

#include "harness/program.h"

namespace aoti {

struct HostInfo {
  std::string platform = "linux";
  std::string machine;               // uname -m
  std::set<std::string> cpu_flags;   // from /proc/cpuinfo ("flags" or "Features")
  bool has_cuda = false;
};

// DetectHost reads this machine's facts.
HostInfo DetectHost();

// RequiredCpuFlags: the /proc/cpuinfo flags an AOTI_CPU_ISA value needs, e.g.
// "AVX512 AVX512_VNNI" -> avx512f avx512dq avx512vl avx512bw fma avx512_vnni.
// Unknown ISA names are returned in `unknown`.
std::set<std::string> RequiredCpuFlags(const std::string& isa, std::vector<std::string>* unknown);

// CheckPackageAgainstHost: problems with the AOTI metadata on this host.
std::vector<std::string> CheckPackageAgainstHost(const std::map<std::string, std::string>& metadata,
                                                 const HostInfo& host);

// CheckInputs: problems with `inputs` against the program's user inputs.
// `device` is the package's device key ("cpu", "cuda").
std::vector<std::string> CheckInputs(const Program& program, const std::vector<at::Tensor>& inputs,
                                     const std::string& device);

}  // namespace aoti
