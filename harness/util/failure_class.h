// Failure classes: the verdicts of a check, one enum with one table of names. The names are
// what every message, case.json, summary.json, test.xml and repro.py carry ("accuracy",
// "compile error", "signal SIGSEGV (Segmentation fault)", ...); code compares the enum
// (ClassOf, Is), never a spelled-out name.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace aoti {

enum class FailureClass {
  kPasses,               // "passes": not a failure
  kCompileError,         // AOTI could not compile the program
  kLoadError,            // the compiled model could not be loaded
  kRuntimeError,         // the compiled model raised
  kSignal,               // the compiled model crashed: "signal SIGSEGV (...)"
  kTimeout,              // the compiled model hung
  kAccuracy,             // numbers that drift from the float64 reference
  kPreflight,            // the inputs do not fit the program
  kExportError,          // torch.export failed when the package was built
  kHarnessError,         // the harness itself could not go on
  kNondeterministic,     // the model is random: no rule can judge it
  kUnreliableReference,  // eager and float64 disagree too much to judge
  kHarnessDisagreement,  // the harness' eager disagrees with the recorded eager
  kNotSupported,         // a construct the interpreter does not run
  kInvalidInputs,        // eager fails on the inputs too: the inputs', not the compiler's
};

// Name: the class's name ("signal" for kSignal, which a verdict follows with the signal).
const char* Name(FailureClass c);

// ClassOf: the class a verdict's text names ("signal SIGILL (...)" is kSignal; "" is
// kPasses); nullopt for text that names none (such as "compile server timeout").
std::optional<FailureClass> ClassOf(const std::string& failure_class);

// Is: whether a verdict's text is of class c.
bool Is(const std::string& failure_class, FailureClass c);

// IsCompilerFailure: whether a verdict is a failure of the compiler (a compile error, a
// crash, a hang, numbers that drift), the kind a reduction preserves and a repro shows. Not
// the inputs' or the package's (preflight, export error), the harness's own (harness error,
// harness disagreement), nor inputs eager fails on too (invalid inputs), nor a verdict
// that no rule could judge (nondeterministic, unreliable reference, not supported): nothing of those is reduced, and no message offers
// to. The one list: the reducer refuses the rest, the listener skips it.
bool IsCompilerFailure(const std::string& failure_class);

// IsCrash: the compiled model raised, crashed or hung (runtime error, signal, timeout).
bool IsCrash(const std::string& failure_class);

// AllFailureClasses: every class, in the enum's order (for tables and tests).
std::vector<FailureClass> AllFailureClasses();

}  // namespace aoti
