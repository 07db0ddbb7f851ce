// The program JSON parser (models/<name>.json of a torch.export archive).
#include "fuzz/fuzz_util.h"
#include "harness/program/program.h"
#include "harness/program/program_signature.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = aoti::AsString(data, size);
  aoti::Refusable([&] {
    const aoti::Program p = aoti::Program::Parse(text, "fuzz.json");
    (void)p.ToJson();
  });
  aoti::Refusable([&] { (void)aoti::ParseProgramSignature(text, "fuzz.json"); });
  return 0;
}
