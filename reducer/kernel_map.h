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

#include <string>
#include <utility>
#include <vector>

#include "harness/program.h"

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

// KernelInCompilerOutput: the function the compiler's first error is in; "" when the
// output names none.
std::string KernelInCompilerOutput(const std::string& compiler_output);

// KernelThatDidNotFinish: the last kernel with a before_launch line and no after_launch
// line after it; "" when every launched kernel finished (or nothing was printed).
std::string KernelThatDidNotFinish(const std::string& launch_log);

// LastFinishedKernel: the last kernel with an after_launch line; "" when none.
std::string LastFinishedKernel(const std::string& launch_log);

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
