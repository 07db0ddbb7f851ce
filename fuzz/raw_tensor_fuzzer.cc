// The raw tensor reader: a JSON record (first line) and the bytes it describes (the rest).
#include <ATen/ATen.h>

#include "fuzz/fuzz_util.h"
#include "harness/archive/tensor_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input = aoti::AsString(data, size);
  const size_t nl = input.find('\n');
  const std::string record_text = input.substr(0, nl);
  const std::string bytes = nl == std::string::npos ? "" : input.substr(nl + 1);
  const nlohmann::json j = nlohmann::json::parse(record_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;  // the record's JSON syntax is the JSON library's concern
  aoti::Refusable([&] {
    const aoti::TensorRecord r = aoti::TensorRecordFromJson(j, "fuzz tensor");
    const at::Tensor t = aoti::ReadRawTensor(r, bytes, "fuzz tensor");
    (void)aoti::CopyOf(t);
  });
  return 0;
}
