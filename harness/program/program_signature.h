// ProgramSignature: the calling convention of a torch.export program (models/<name>.json):
// its schema version, the user inputs (with dtype and sizes, symbolic sizes by name), the
// parameters, buffers and constants it lifts, and the user outputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <c10/core/ScalarType.h>
#include <nlohmann/json.hpp>

namespace aoti {

struct SchemaVersion {
  int major = 0;
  int minor = 0;
};

// DimSpec: a concrete size, or a symbolic one (sym is its name, e.g. "s0").
struct DimSpec {
  int64_t size = -1;
  std::string sym;
  bool is_symbolic() const { return !sym.empty(); }
};

struct TensorSpec {
  std::string name;
  c10::ScalarType dtype = c10::ScalarType::Undefined;
  std::vector<DimSpec> sizes;
};

struct ProgramSignature {
  SchemaVersion schema_version;
  std::vector<TensorSpec> user_inputs;
  std::vector<std::string> parameters;  // fully qualified names, e.g. "fc1.weight"
  std::vector<std::string> buffers;
  std::vector<std::string> constants;
  std::vector<std::string> user_outputs;  // graph value names
  std::vector<std::string> mutated_buffers;
};

// The schema major version this harness reads.
inline constexpr int kSupportedSchemaMajor = 8;

// ParseProgramSignature reads a program's JSON text. Throws HarnessError naming `what`
// for malformed JSON, an unknown schema major version, or a missing field.
ProgramSignature ParseProgramSignature(const std::string& json_text, const std::string& what);

// ScalarTypeFromSchema maps the export schema's dtype enum to c10::ScalarType.
c10::ScalarType ScalarTypeFromSchema(int code, const std::string& what);

// DeviceNameFromSchema: the export schema's Device {"type": "cuda", "index": 0} as a
// device name ("cuda:0"; "cpu" for {"type": "cpu", "index": null}). Throws HarnessError
// naming `what` when it is not such an object.
std::string DeviceNameFromSchema(const nlohmann::json& device, const std::string& what);

}  // namespace aoti
