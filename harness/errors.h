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

}  // namespace aoti
