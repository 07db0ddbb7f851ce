// Diagnosis: what harness/triage/triage.h says of a failed check: an id from its table, a title,
// the evidence, and the next steps (a sentence each, or a command to copy, "$ ...").
#pragma once

#include <string>
#include <vector>

namespace aoti {

struct Diagnosis {
  std::string id, title;
  std::vector<std::string> evidence;
  std::vector<std::string> next_steps;
};

}  // namespace aoti
