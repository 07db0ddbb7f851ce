#include "harness/check/preflight.h"

#include <dlfcn.h>
#include <sys/utsname.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <c10/core/DeviceType.h>
#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>

#include "harness/util/errors.h"

#include "harness/archive/tensor_io.h"
#include "harness/util/strings.h"

namespace aoti {
namespace {

std::string DescribeSpec(const std::vector<DimSpec>& dims) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    os << (i ? ", " : "");
    if (dims[i].is_symbolic()) os << dims[i].sym;
    else os << dims[i].size;
  }
  os << "]";
  return os.str();
}

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string CodegenCpuFlags(const std::set<std::string>& cpu_flags) {
  // Prefixes of /proc/cpuinfo's names for instruction set extensions g++ can target.
  static const char* const kIsa[] = {
      // x86
      "sse", "ssse3", "avx", "fma", "f16c", "bmi", "popcnt", "abm", "lzcnt", "movbe", "aes", "pclmulqdq", "sha_ni",
      "vaes", "vpclmulqdq", "gfni", "adx", "rdrand", "rdseed", "amx", "cx16", "xop", "tbm", "vnni", "avx_vnni",
      "clflushopt", "clwb", "xsave", "prefetchw", "3dnowprefetch", "serialize", "movdir", "waitpkg", "cldemote",
      "mmx", "fxsr", "lahf_lm", "fsgsbase", "rdpid", "pku", "sgx", "shstk", "lwp", "mwaitx", "clzero", "wbnoinvd",
      "ptwrite", "enqcmd", "uintr", "hreset", "pconfig", "tsxldtrk", "rtm", "hle", "kl", "widekl",
      // ARM
      "fp", "asimd", "sve", "bf16", "i8mm", "fphp", "fcma", "jscvt", "lrcpc", "dcpop", "sha", "sm3", "sm4", "crc32",
      "atomics", "dit", "flagm", "frint", "svebf16", "svei8mm", "sme"};
  std::string out;
  for (const auto& f : cpu_flags) {  // a std::set: sorted
    for (const char* p : kIsa) {
      if (f.rfind(p, 0) == 0) {
        out += (out.empty() ? "" : " ") + f;
        break;
      }
    }
  }
  return out;
}

HostInfo DetectHost() {
  HostInfo h;
  struct utsname u {};
  if (::uname(&u) == 0) {
    h.platform = Lower(u.sysname);
    h.machine = u.machine;
  }
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      std::string w;
      while (words >> w) h.cpu_flags.insert(w);
      break;
    }
  }
  h.has_cuda = at::hasCUDA();
  h.cuda = DetectCudaHost();
  return h;
}

namespace {

CudaHost AskCudaDriver() {
  CudaHost c;
  try {
    if (at::detail::getCUDAHooks().hasCUDART()) c.runtime_version = static_cast<int>(at::detail::getCUDAHooks().versionCUDART());
  } catch (const c10::Error&) {
  }
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = ::dlerror();
    c.driver_error = std::string("no CUDA driver (libcuda.so.1: ") + (err ? err : "not found") + ")";
    return c;
  }
  // The driver API's C signatures: CUresult is an int, CUdevice an int.
  using InitFn = int (*)(unsigned int);
  using IntFn = int (*)(int*);
  using GetFn = int (*)(int*, int);
  using AttrFn = int (*)(int*, int, int);
  using NameFn = int (*)(char*, int, int);
  auto init = reinterpret_cast<InitFn>(::dlsym(lib, "cuInit"));
  auto version = reinterpret_cast<IntFn>(::dlsym(lib, "cuDriverGetVersion"));
  auto count = reinterpret_cast<IntFn>(::dlsym(lib, "cuDeviceGetCount"));
  auto get = reinterpret_cast<GetFn>(::dlsym(lib, "cuDeviceGet"));
  auto attr = reinterpret_cast<AttrFn>(::dlsym(lib, "cuDeviceGetAttribute"));
  auto name = reinterpret_cast<NameFn>(::dlsym(lib, "cuDeviceGetName"));
  if (!init || !version || !count || !get || !attr || !name) {
    c.driver_error = "libcuda.so.1 lacks the driver API's cuInit/cuDeviceGet* entry points";
    return c;
  }
  if (version(&c.driver_version) != 0) c.driver_version = 0;
  if (const int rc = init(0); rc != 0) {
    c.driver_error = "the CUDA driver did not initialise (cuInit error " + std::to_string(rc) + ")";
    return c;
  }
  int n = 0;
  if (count(&n) != 0) n = 0;
  constexpr int kMajor = 75, kMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_{MAJOR,MINOR}
  for (int i = 0; i < n; ++i) {
    int dev = 0;
    if (get(&dev, i) != 0) continue;
    GpuInfo g;
    char buf[256] = {};
    if (name(buf, sizeof(buf) - 1, dev) == 0) g.name = buf;
    attr(&g.major, kMajor, dev);
    attr(&g.minor, kMinor, dev);
    c.gpus.push_back(g);
  }
  // The library stays loaded: torch's CUDA runtime uses the same one.
  return c;
}

}  // namespace

CudaHost DetectCudaHost() {
  static const CudaHost* host = new CudaHost(AskCudaDriver());
  return *host;
}

int CudaVersionNumber(const std::string& version, const std::string& what) {
  if (version.empty() || version == "None") return 0;
  int major = 0, minor = 0;
  char extra = 0;
  if (std::sscanf(version.c_str(), "%d.%d%c", &major, &minor, &extra) != 2 || major <= 0 || minor < 0 || minor > 99) {
    throw HarnessError(what + ": '" + version + "' is not a CUDA version; expected MAJOR.MINOR such as 13.0");
  }
  return major * 1000 + minor * 10;
}

std::string CudaVersionName(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::set<std::string> RequiredCpuFlags(const std::string& isa, std::vector<std::string>* unknown) {
  static const std::map<std::string, std::vector<std::string>> kFlags = {
      {"AVX512", {"avx512f", "avx512dq", "avx512vl", "avx512bw", "fma"}},
      {"AVX512_VNNI", {"avx512_vnni", "avx512vl"}},
      {"AMX_TILE", {"amx_tile", "amx_bf16", "amx_int8"}},
      {"AVX2", {"avx2", "fma", "f16c"}},
      {"ASIMD", {"asimd"}},
      {"NEON", {"asimd"}},
      {"SVE", {"sve"}},
  };
  std::set<std::string> flags;
  std::istringstream words(isa);
  std::string w;
  while (words >> w) {
    std::string key = w;
    for (auto& c : key) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (key.rfind("SVE", 0) == 0) key = "SVE";  // SVE256, SVE128
    auto it = kFlags.find(key);
    if (it == kFlags.end()) {
      if (unknown) unknown->push_back(w);
      continue;
    }
    flags.insert(it->second.begin(), it->second.end());
  }
  return flags;
}

namespace {

void CheckCuda(const std::map<std::string, std::string>& metadata, const CudaHost& cuda,
               const std::string& cuda_version, std::vector<std::string>* problems) {
  // The kernels' architecture: AOTI records the compile GPU's compute capability as
  // major * 10 + minor ("90" for sm_90). A cubin runs on GPUs of its own major version at
  // the same or a newer minor version, and on no other.
  auto it = metadata.find("AOTI_COMPUTE_CAPABILITY");
  const std::string cc = it == metadata.end() ? "" : it->second;
  int package_cc = 0;
  if (!cc.empty() && cc != "None" && (std::sscanf(cc.c_str(), "%d", &package_cc) != 1 || package_cc <= 0)) {
    problems->push_back("compute capability: AOTI_COMPUTE_CAPABILITY is '" + cc +
                        "'; expected major * 10 + minor, such as 90 for sm_90");
    package_cc = 0;
  }
  if (package_cc > 0 && !cuda.gpus.empty()) {
    const GpuInfo& g = cuda.gpus[0];
    const int major = package_cc / 10, minor = package_cc % 10;
    if (g.major != major || g.minor < minor) {
      problems->push_back("compute capability: the package's kernels were compiled for sm_" + std::to_string(package_cc) +
                          " (AOTI_COMPUTE_CAPABILITY " + cc + "), and cuda:0 (" + g.name + ") is sm_" +
                          std::to_string(g.major * 10 + g.minor) +
                          "; a kernel binary runs only on its own major architecture at the same or a newer minor "
                          "version: rebuild the package on this GPU's architecture");
    }
  }
  // The CUDA versions: a runtime of CUDA M.x needs a driver of CUDA M.0 or newer.
  int package_version = 0;
  try {
    package_version = CudaVersionNumber(cuda_version, "the package's cuda_version");
  } catch (const HarnessError& e) {
    problems->push_back(std::string("CUDA version: ") + e.what());
  }
  auto needs_driver = [&](int runtime, const std::string& whose) {
    if (runtime == 0 || cuda.driver_version == 0) return;
    if (cuda.driver_version / 1000 < runtime / 1000) {
      problems->push_back("CUDA version: " + whose + " CUDA " + CudaVersionName(runtime) +
                          ", and this host's driver supports CUDA up to " + CudaVersionName(cuda.driver_version) +
                          "; a CUDA " + std::to_string(runtime / 1000) + " runtime needs a driver for CUDA " +
                          std::to_string(runtime / 1000) + ".0 or newer: update the driver, or use a torch built "
                          "for the driver's CUDA");
    }
  };
  needs_driver(package_version, "the package was built by a torch with");
  needs_driver(cuda.runtime_version, "the harness runs a torch with");
  if (package_version && cuda.runtime_version && package_version / 1000 != cuda.runtime_version / 1000) {
    problems->push_back("CUDA version: the package was built by a torch with CUDA " + CudaVersionName(package_version) +
                        ", and the harness runs a torch with CUDA " + CudaVersionName(cuda.runtime_version) +
                        "; the compiled model links the CUDA runtime it was built with: build the package with "
                        "the torch the harness links");
  }
}

}  // namespace

std::vector<std::string> CheckPackageAgainstHost(const std::map<std::string, std::string>& metadata,
                                                 const HostInfo& host, const std::string& cuda_version) {
  std::vector<std::string> problems;
  auto get = [&](const char* key) {
    auto it = metadata.find(key);
    return it == metadata.end() ? std::string() : it->second;
  };
  const std::string device = get("AOTI_DEVICE_KEY");
  if (device.empty()) {
    problems.push_back("the package's AOTI metadata has no AOTI_DEVICE_KEY; expected the compile device (cpu, cuda, ...)");
  } else if (device == "cuda" && !host.has_cuda) {
    if (host.cuda.gpus.empty()) {
      problems.push_back("device: the package was compiled for cuda, and this host has no CUDA device (" +
                         (host.cuda.driver_error.empty() ? std::string("the driver shows no GPU") : host.cuda.driver_error) +
                         "; the load device must be the compile device; only the index may differ)");
    } else {
      problems.push_back("device: the package was compiled for cuda, and this host has " +
                         std::to_string(host.cuda.gpus.size()) + " GPU(s) (" + host.cuda.gpus[0].name +
                         "), but the harness in this test links a CPU-only torch; build it against a CUDA torch "
                         "(bazel test --config=cuda)");
    }
  } else if (device == "cuda") {
    CheckCuda(metadata, host.cuda, cuda_version, &problems);
  } else if (device != "cpu" && device != "cuda") {
    problems.push_back("device: the package was compiled for '" + device + "', which this harness cannot run");
  }
  const std::string platform = get("AOTI_PLATFORM"), machine = get("AOTI_MACHINE");
  if (!platform.empty() && Lower(platform) != host.platform) {
    problems.push_back("platform: the package was compiled for " + platform + ", this host is " + host.platform);
  }
  if (!machine.empty() && !host.machine.empty() && machine != host.machine) {
    problems.push_back("machine: the package was compiled for " + machine + ", this host is " + host.machine);
  }
  const std::string isa = get("AOTI_CPU_ISA");
  if (device == "cpu" && !isa.empty() && !host.cpu_flags.empty()) {
    std::vector<std::string> unknown;
    std::string missing;
    for (const auto& flag : RequiredCpuFlags(isa, &unknown)) {
      if (!host.cpu_flags.count(flag)) missing += (missing.empty() ? "" : " ") + flag;
    }
    if (!missing.empty()) {
      problems.push_back("CPU ISA: the package's kernels were compiled for " + isa +
                         ", and this CPU lacks " + missing +
                         " (running it would die of SIGILL); rebuild the package on this host's ISA");
    }
  }
  return problems;
}

namespace {

using SymbolBindings = std::map<std::string, std::pair<int64_t, std::string>>;  // symbol -> (value, where)

// CheckShape: each dimension against its static size, or its symbol's range and the value
// another input bound it to. Returns whether the shape holds.
bool CheckShape(const Program& program, const std::string& who, const at::Tensor& t, const TensorMeta& meta,
                SymbolBindings* bound, std::vector<std::string>* problems) {
  bool shape_ok = true;
  for (size_t d = 0; d < meta.sizes.size(); ++d) {
    const DimSpec& spec = meta.sizes[d];
    const int64_t got = t.size(static_cast<int64_t>(d));
    if (!spec.is_symbolic()) {
      if (got != spec.size) {
        problems->push_back(who + ": has shape [" + JoinInts(t.sizes().vec()) + "], expected " + DescribeSpec(meta.sizes) +
                            " (dim " + std::to_string(d) + " is " + std::to_string(got) + ", expected " +
                            std::to_string(spec.size) + ")");
        shape_ok = false;
      }
      continue;
    }
    auto range = program.range_constraints.find(spec.sym);
    if (range != program.range_constraints.end() && (got < range->second.min || got > range->second.max)) {
      problems->push_back(who + ": dim " + std::to_string(d) + " (" + spec.sym + ") is " + std::to_string(got) +
                          ", outside the exported range [" + std::to_string(range->second.min) + ", " +
                          std::to_string(range->second.max) + "]");
      shape_ok = false;
    }
    auto b = bound->find(spec.sym);
    if (b == bound->end()) {
      (*bound)[spec.sym] = {got, who + " dim " + std::to_string(d)};
    } else if (b->second.first != got) {
      problems->push_back(who + ": dim " + std::to_string(d) + " (" + spec.sym + ") is " + std::to_string(got) +
                          ", but " + b->second.second + " binds " + spec.sym + " = " + std::to_string(b->second.first));
      shape_ok = false;
    }
  }
  return shape_ok;
}

// CheckStrides: the compiled code indexes inputs with the strides it was compiled for.
void CheckStrides(const std::string& who, const at::Tensor& t, const TensorMeta& meta,
                  std::vector<std::string>* problems) {
  bool static_strides = meta.strides.size() == meta.sizes.size();
  for (const auto& s : meta.strides) static_strides = static_strides && !s.is_symbolic();
  if (!static_strides) {
    if (!t.is_contiguous()) {
      problems->push_back(who + ": is not contiguous (strides [" + JoinInts(t.strides().vec()) + "]" +
                          "); the program was exported with a contiguous input");
    }
    return;
  }
  for (size_t d = 0; d < meta.strides.size(); ++d) {
    if (t.size(static_cast<int64_t>(d)) > 1 && t.stride(static_cast<int64_t>(d)) != meta.strides[d].size) {
      std::vector<int64_t> want;
      for (const auto& s : meta.strides) want.push_back(s.size);
      problems->push_back(who + ": has strides [" + JoinInts(t.strides().vec()) + "]" +
                          (t.is_contiguous() ? "" : " (not contiguous)") + ", expected strides [" + JoinInts(want) +
                          "]; pass .contiguous() or re-export with this layout");
      return;
    }
  }
}

}  // namespace

std::vector<std::string> CheckInputs(const Program& program, const std::vector<at::Tensor>& inputs,
                                     const std::string& device) {
  std::vector<std::string> problems;
  std::vector<const InputSpecEntry*> specs;
  for (const auto& s : program.input_specs) {
    if (s.kind == InputKind::kUserInput && !s.value_name.empty()) specs.push_back(&s);
  }
  if (specs.size() != inputs.size()) {
    problems.push_back("inputs: the program takes " + std::to_string(specs.size()) + " tensor inputs, " +
                       std::to_string(inputs.size()) + " were given");
    return problems;
  }
  SymbolBindings bound;
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string& name = specs[i]->value_name;
    const at::Tensor& t = inputs[i];
    const std::string who = "input " + std::to_string(i) + " '" + name + "'";
    auto meta_it = program.tensor_values.find(name);
    if (meta_it == program.tensor_values.end()) continue;
    const TensorMeta& meta = meta_it->second;
    if (!t.defined()) {
      problems.push_back(who + ": is an undefined tensor");
      continue;
    }
    const std::string given_device = c10::DeviceTypeName(t.device().type(), /*lower_case=*/true);
    if (given_device != device) {
      problems.push_back(who + ": is on " + t.device().str() + ", expected " + device + " (the package's device)");
    }
    if (t.scalar_type() != meta.dtype) {
      problems.push_back(who + ": has dtype " + ScalarTypeName(t.scalar_type()) + ", expected " +
                         ScalarTypeName(meta.dtype));
    }
    if (static_cast<size_t>(t.dim()) != meta.sizes.size()) {
      problems.push_back(who + ": has shape [" + JoinInts(t.sizes().vec()) + "] (" + std::to_string(t.dim()) +
                         "-D), expected " + DescribeSpec(meta.sizes) + " (" + std::to_string(meta.sizes.size()) + "-D)");
      continue;
    }
    if (CheckShape(program, who, t, meta, &bound, &problems)) CheckStrides(who, t, meta, &problems);
  }
  return problems;
}

}  // namespace aoti
