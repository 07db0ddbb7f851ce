// ShiftRecording: a copy of a package whose recorded eager and float64 outputs (the first
// output's, tensors/eager_0.bin and tensors/eager_fp64_0.bin) are all + 0.5, the compiled
// model unchanged: a compiled output that drifts from Python's recording, for the tests of
// checks judged by that recording (a program held in Python, a package without its program).
#pragma once

#include <string>

namespace aoti {

// Writes the copy to `out`; returns how many records it shifted (2 when both were found).
int ShiftRecording(const std::string& package, const std::string& out);

}  // namespace aoti
