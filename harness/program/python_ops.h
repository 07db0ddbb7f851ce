// The Python scalar operators a program's graph calls on SymInts, SymFloats and SymBools
// (_operator.add, _operator.floordiv, ..., torch.sym_max, ...), with Python's meaning where
// a 64-bit value can hold the answer: floor division and a modulo with the divisor's sign,
// exact integer comparison and power. Where it cannot (a value past 64 bits, a shift of 64 or
// more to the left, a negative shift, a division by zero, INT64_MIN // -1) the operator
// throws HarnessError naming `where`, the operator and its operands; never a wrong value, a
// trap or undefined behaviour.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

namespace aoti {

// The operators' names as the graph gives them (the target without "_operator." or
// "torch.").
const std::set<std::string>& PythonOps();

// ApplyPythonOp: `op` on `operands` (ints, bools and doubles, as IValues).
c10::IValue ApplyPythonOp(const std::string& op, const std::vector<c10::IValue>& operands, const std::string& where);

}  // namespace aoti
