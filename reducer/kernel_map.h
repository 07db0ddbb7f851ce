// KernelMap: from what the generated code said back to the graph nodes it came from.
//
// Inductor names each generated kernel after the ATen ops fused into it (its default
// `triton.descriptive_names = "original_aten"` applies to C++ kernels too):
// cpp_fused_relu_1, cpp_fused_mul_sigmoid_2, triton_poi_fused_add_relu_0. Calls into
// ATen are named aoti_torch_cpu_addmm_out, aoti_torch_cuda_mm_out, ... So a kernel name
// maps back to the nodes whose operator it names.
//
// Two places name the kernel that failed:
//   - g++ prefixes a compile error with the function it is in
//     ("In function 'void cpp_fused_relu_1(float*, float*)':");
//   - AOTI's intermediate value printer in its names-only mode
//     (aot_inductor.debug_intermediate_value_printer = "3", read when the wrapper is
//     generated, so it takes a compile) prints "[ before_launch: K ]" and
//     "[ after_launch: K ]" around every launch; the kernel launched and never finished
//     is the one that crashed.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness/program/program.h"

namespace aoti {

// The inductor config that makes the compiled wrapper print each kernel's name around
// its launch (names only, no tensor values).
constexpr char kKernelNamePrinterConfig[] = "aot_inductor.debug_intermediate_value_printer";
constexpr char kKernelNamePrinterNamesOnly[] = "3";

// KernelPrinterEnv: the environment of a run under the kernel-name printer on `device`
// (a package's AOTI device, "cpu" or "cuda"). On a GPU the printer's line after a launch
// comes before the kernel has run (launches are asynchronous), so every kernel would look
// finished: the run is made with CUDA_LAUNCH_BLOCKING=1, each launch waiting for its kernel.
std::vector<std::pair<std::string, std::string>> KernelPrinterEnv(const std::string& device);

// The inductor config that records which graph nodes each kernel came from (provenance
// tracking): the compile server returns the record with the compile, also when the compile
// failed (tools/package_model.py, KernelInformation). Read when the code is generated, so it
// rides on the kernel-name printer's compile.
constexpr char kProvenanceConfig[] = "trace.provenance_tracking_level";

// KernelProvenance: one compile's record: each kernel and extern call, by its name in the
// generated code -> one list per call of it, in the order inductor generated the calls, of
// the names of the exported graph's nodes the call came from. Empty: no record.
using KernelProvenance = std::map<std::string, std::vector<std::vector<std::string>>>;

// ParseKernelProvenance: the compile server's "kernel_information" (JSON); "" or a record
// of another shape gives an empty one (the kernels' names are read instead).
KernelProvenance ParseKernelProvenance(const std::string& json);

// KernelNodes: the nodes a kernel came from, as the record says. `call`: which call of the
// kernel (0 for the first); one the record does not have (or -1) stands for all of them.
// Indices in order; empty when the record does not know the kernel or names no node of
// `program`.
std::vector<size_t> KernelNodes(const Program& program, const KernelProvenance& provenance, const std::string& kernel,
                                int call = -1);

// KernelInCompilerOutput: the function the compiler's first error is in; "" when the
// output names none.
std::string KernelInCompilerOutput(const std::string& compiler_output);

// KernelThatDidNotFinish: the last kernel with a before_launch line and no after_launch
// line after it; "" when every launched kernel finished (or nothing was printed).
std::string KernelThatDidNotFinish(const std::string& launch_log);

// LastFinishedKernel: the last kernel with an after_launch line; "" when none.
std::string LastFinishedKernel(const std::string& launch_log);

// FinishedLaunches: how many launches of `kernel` finished (have an after_launch line) in
// the log. For the kernel that did not finish, the index of its failing call.
int FinishedLaunches(const std::string& launch_log, const std::string& kernel);

// FinishedKernels: every kernel with an after_launch line in the log.
std::vector<std::string> FinishedKernels(const std::string& launch_log);

// UnprintedCallNodes: the nodes whose call the kernel-name printer does not wrap: ops
// outside aten and prims (custom ops), which the compiled wrapper calls through the
// proxy executor or the dispatcher. When every printed launch finished and the model
// still crashed, the crash is in one of these.
std::vector<size_t> UnprintedCallNodes(const Program& program);

// KernelOperators: the operator names a kernel name carries, as one '_'-joined string:
// cpp_fused_mul_sigmoid_2 -> "mul_sigmoid", aoti_torch_cpu_addmm_out -> "addmm".
std::string KernelOperators(const std::string& kernel);

// NodesForKernel: the nodes (indices, in order) whose operator the kernel's name
// carries; "aten.relu.default" is named by "relu", a custom op "ns.op.default" by "op".
std::vector<size_t> NodesForKernel(const Program& program, const std::string& kernel);

}  // namespace aoti
