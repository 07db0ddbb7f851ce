// The harness' package manifest (extra/aoti_harness/package.json).
#include "fuzz/fuzz_util.h"
#include "harness/archive/package_manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  aoti::Refusable([&] { (void)aoti::ParsePackageManifest(aoti::AsString(data, size), "fuzz.pt2"); });
  return 0;
}
