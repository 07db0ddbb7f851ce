// CaseFile: a failing case directory's case.json, as the harness writes it
// (harness/failing_case.cc) and aoti_reduce reads it (--case_dir).
#pragma once

#include <string>

namespace aoti {

struct CaseFile {
  std::string package;        // absolute, or relative to the case directory already joined
  std::string inputs_dir;     // "" when the case uses the package's sample inputs
  std::string failure_class;
  std::string check_str;
  bool has_accuracy = false;
  bool strict = false;        // accuracy.mode == "strict"
  double tolerance = 1e-3;
};

// ParseCaseFile: `text` is case.json of the directory `case_dir`. Throws HarnessError
// naming case.json and the field for malformed JSON, a field of the wrong type, an
// unknown accuracy mode, a negative or non-finite tolerance, or a missing package.
CaseFile ParseCaseFile(const std::string& text, const std::string& case_dir);

}  // namespace aoti
