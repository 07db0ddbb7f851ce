// Shared by the reader fuzzers: a reader may refuse its input only with HarnessError,
// naming what is wrong. Any other exception escapes LLVMFuzzerTestOneInput, and libFuzzer
// reports it as a crash, as it does for ASan and UBSan findings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "harness/util/errors.h"

namespace aoti {

inline std::string AsString(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Refused: runs f; a HarnessError is an accepted refusal.
template <typename F>
void Refusable(F&& f) {
  try {
    f();
  } catch (const HarnessError&) {
  }
}

}  // namespace aoti
