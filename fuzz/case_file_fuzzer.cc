// A failing case's case.json, as aoti_reduce --case_dir reads it.
#include "fuzz/fuzz_util.h"
#include "harness/case/case_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  aoti::Refusable([&] { (void)aoti::ParseCaseFile(aoti::AsString(data, size), "/fuzz/case"); });
  return 0;
}
