#include "harness/util/failure_class.h"

namespace aoti {
namespace {

struct Row {
  FailureClass c;
  const char* name;
  bool compiler_failure;  // the compiler's failure: reduced, shown in a repro
  bool crash;             // the compiled model raised, crashed or hung
};

// The one table of failure classes.
constexpr Row kClasses[] = {
    {FailureClass::kPasses, "passes", false, false},
    {FailureClass::kCompileError, "compile error", true, false},
    {FailureClass::kLoadError, "load error", true, false},
    {FailureClass::kRuntimeError, "runtime error", true, true},
    {FailureClass::kSignal, "signal", true, true},
    {FailureClass::kTimeout, "timeout", true, true},
    {FailureClass::kAccuracy, "accuracy", true, false},
    {FailureClass::kPreflight, "preflight", false, false},
    {FailureClass::kExportError, "export error", false, false},
    {FailureClass::kHarnessError, "harness error", false, false},
    {FailureClass::kNondeterministic, "nondeterministic", false, false},
    {FailureClass::kUnreliableReference, "unreliable reference", false, false},
    {FailureClass::kHarnessDisagreement, "harness disagreement", false, false},
    {FailureClass::kNotSupported, "not supported", false, false},
    {FailureClass::kInvalidInputs, "invalid inputs", false, false},
};

const Row& RowOf(FailureClass c) {
  for (const Row& r : kClasses) {
    if (r.c == c) return r;
  }
  return kClasses[0];
}

}  // namespace

const char* Name(FailureClass c) { return RowOf(c).name; }

std::optional<FailureClass> ClassOf(const std::string& failure_class) {
  if (failure_class.empty()) return FailureClass::kPasses;
  for (const Row& r : kClasses) {
    if (failure_class == r.name) return r.c;
  }
  // A crash's verdict names its signal: "signal SIGSEGV (Segmentation fault)".
  if (failure_class.rfind("signal ", 0) == 0) return FailureClass::kSignal;
  return std::nullopt;
}

bool Is(const std::string& failure_class, FailureClass c) {
  const auto of = ClassOf(failure_class);
  return of && *of == c;
}

// A verdict no row names (a future class, or a reducer's own such as "compile server
// timeout") counts as the compiler's: the reducer's oracle decides what it preserves.
bool IsCompilerFailure(const std::string& failure_class) {
  const auto c = ClassOf(failure_class);
  return c ? RowOf(*c).compiler_failure : true;
}

bool IsCrash(const std::string& failure_class) {
  const auto c = ClassOf(failure_class);
  return c && RowOf(*c).crash;
}

std::vector<FailureClass> AllFailureClasses() {
  std::vector<FailureClass> out;
  for (const Row& r : kClasses) out.push_back(r.c);
  return out;
}

}  // namespace aoti
