// Failure classes: the verdicts of a check, by the names every message, case.json and
// repro.py use ("accuracy", "compile error", "signal SIGSEGV", ...).
#pragma once

#include <string>

namespace aoti {

// IsCompilerFailure: whether a verdict is a failure of the compiler (a compile error, a
// crash, a hang, numbers that drift), the kind a reduction preserves and a repro shows. Not
// the inputs' or the package's (preflight, export error), the harness's own (harness error,
// harness disagreement), nor a verdict that no rule could judge (nondeterministic,
// unreliable reference, not supported): nothing of those is reduced, and no message offers
// to. The one list: the reducer refuses the rest, the listener skips it.
bool IsCompilerFailure(const std::string& failure_class);

}  // namespace aoti
