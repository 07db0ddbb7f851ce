#include "harness/failure_class.h"

namespace aoti {

bool IsCompilerFailure(const std::string& failure_class) {
  static const char* const kNotTheCompilers[] = {"preflight",     "harness error",        "export error",
                                                 "nondeterministic", "unreliable reference", "harness disagreement",
                                                 "not supported"};
  if (failure_class.empty() || failure_class == "passes") return false;
  for (const char* c : kNotTheCompilers) {
    if (failure_class == c) return false;
  }
  return true;
}

}  // namespace aoti
