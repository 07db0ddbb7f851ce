// Op libraries: the shared objects of C++ custom operators (TORCH_LIBRARY) a model calls.
// One `op_libraries` list serves every process: packaging and the compile server load it
// into Python, the isolated runner into its child, and EnsureOperators into this process
// for the eager interpreter and an in-process compiled run. Linking the library into the
// test instead (a cc_library with alwayslink) stays possible, not required.
#pragma once

#include <string>
#include <vector>

#include "harness/archive/package_manifest.h"
#include "harness/runner/compiled_runner.h"
#include "harness/program/program.h"

namespace aoti {

// EnsureOperators: every operator `program` calls is registered in this process, loading
// runner.op_libraries when one is not. A library is loaded only when the program needs an
// operator that is missing, and never when a namespace it registers is here already (the
// library is linked into the test, and a second TORCH_LIBRARY of one namespace aborts the
// process): which namespaces a library registers is asked of the isolated runner, which
// loads it in a child process of its own. Throws HarnessError naming the library (cannot
// be loaded, its probe failed) or, when operators are still missing, naming them and the
// libraries given. An operator still missing that `python_ops` (the package manifest's
// record) says a Python file defines is no library's: PythonOnlyOperator, naming it, where
// Python defines it, whether the compiled model calls it back, and the fixes.
void EnsureOperators(const Program& program, const RunnerOptions& runner,
                     const std::vector<PythonOp>& python_ops = {});

// PythonOnlyMessage: what EnsureOperators says of operators written only in Python (ops:
// their manifest records), each named once.
std::string PythonOnlyMessage(const std::vector<PythonOp>& ops);

}  // namespace aoti
