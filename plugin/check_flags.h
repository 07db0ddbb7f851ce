// The edge where the --aoti_* flags become CheckOptions (harness/check/check_options.h). The
// core (the check, the reducer) takes the options as a value and reads no flag.
#pragma once

#include "harness/check/check_options.h"

namespace aoti {

// CheckOptionsFromFlags: the options the flags describe. With no base, every --aoti_*
// flag's value (its default where not given); with a base (a case's options, or the file
// --aoti_check_options names), the base with only the flags given on the command line
// laid over it. Throws HarnessError naming the flag (or the file and field) for a bad
// value.
CheckOptions CheckOptionsFromFlags(const CheckOptions* base = nullptr);

// ReadCheckOptionsFile: the options in a JSON file: a case.json (its "check_options") or
// an options object as CheckOptionsToJson writes it; relative op library paths are taken
// from the file's directory. Throws HarnessError naming the file.
CheckOptions ReadCheckOptionsFile(const std::string& path);

}  // namespace aoti
