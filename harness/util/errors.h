// HarnessError: the one exception type harness code throws for a problem with its input
// (a file, an archive, a model name, a package) as opposed to a bug in the harness.
// Its message names the input and says what was expected.
#pragma once

#include <stdexcept>
#include <string>

namespace aoti {

class HarnessError : public std::runtime_error {
 public:
  explicit HarnessError(const std::string& message) : std::runtime_error(message) {}
};

// UnsupportedConstruct: the program uses a construct the harness does not run yet (a
// higher-order op, a Python callable, a custom object it has no way to call). Its message
// names the construct and the node; the check's verdict is "not supported", not a failure
// of AOTI and not a missing library.
class UnsupportedConstruct : public HarnessError {
 public:
  using HarnessError::HarnessError;
};

// PythonOnlyOperator: the program calls an operator written only in Python (a custom_op
// with no C++ kernel): no C++ process can run it, the compiled model included. Its message
// names the operator, where Python defines it, and the fixes.
class PythonOnlyOperator : public UnsupportedConstruct {
 public:
  using UnsupportedConstruct::UnsupportedConstruct;
};

// ProgramConstraintError: the inputs break an assumption the program was exported under:
// a data-dependent size (an unbacked symbol such as u0) outside its range_constraints, or
// bound to two values. The check's verdict is a preflight failure: the inputs, not AOTI.
class ProgramConstraintError : public HarnessError {
 public:
  using HarnessError::HarnessError;
};

// RunStopped: a run of the interpreter stopped at its deadline (InterpreterOptions::deadline)
// before it ended: a loop that does not end, or a program slower than the test allows. Its
// message names the deadline, the node it stopped in and, inside loops, the iteration. The
// check's verdict is "timeout", as for a compiled model that hangs.
class RunStopped : public HarnessError {
 public:
  using HarnessError::HarnessError;
};

// OperatorError: an operator of the program raised when the interpreter called it (ATen's
// own check of its arguments: an index out of range, offsets that do not fit the ids). Its
// message names the node and the operator's words. Eager raises the same on the same
// inputs: a compiled run that fails on them too is the inputs' failure, not the compiler's.
class OperatorError : public HarnessError {
 public:
  using HarnessError::HarnessError;
};

}  // namespace aoti
