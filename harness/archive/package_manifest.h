// PackageManifest: extra/aoti_harness/package.json, which tools/package_model.py writes
// into every archive (and the reducer into every candidate): where the model came from,
// the inductor config patches, how the AOTI compile went (with the compiler's error when
// it failed), and the raw flat inputs and eager outputs recorded at build time.
//
// One schema, one writer and one reader on each side: PackageManifestToJson /
// ParsePackageManifest here, package_manifest() / read_manifest() in
// tools/package_model.py; //harness/archive:package_manifest_format_test has each side read
// what the other wrote.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/archive/tensor_io.h"

namespace aoti {

struct CompileRecord {
  std::string status;  // "ok", "error", "skipped" (export-only package) or "export_error" (no program)
  double seconds = 0;
  std::string error_type;
  std::string error_message;
  std::string compiler_errors;  // the compiler's `error:` lines, when g++ failed
  std::string error_traceback;
};

// PrebuiltRecord: a package brought in as a team shipped it (aoti_prebuilt_package): its
// compiled model is the shipped one, byte for byte, never recompiled to be checked.
struct PrebuiltRecord {
  std::string package;   // the shipped .pt2, as the rule named it
  std::string sha256;    // of the shipped .pt2
  std::string program;   // where the exported program came from (the same archive, or a file)
  std::string inputs;    // where the inputs came from
  // Which torch built it, as far as the package says: the torch_version of its exported
  // program's record ("" where none is recorded), and where that was read.
  std::string built_by;
  std::string built_by_from;
  std::string compiled_against;  // the torch headers its shared object names ("" none found)
  // The aoti_torch_* functions its compiled model calls that the packaging torch (the
  // test's) does not have, comma-separated: where not empty, this torch cannot load it.
  std::string missing_symbols;
  std::string this_torch;  // the torch that packaged it for the test (the test's)
};

// PythonOp: an operator the program calls that a Python file defines (a custom_op; a
// torch.library.Library of Python's): no C++ kernel, so neither the harness's C++ nor a C++
// deployment can run it (tools/aoti_package/python_ops.py finds them when packaging).
struct PythonOp {
  std::string op;          // "transformers::grouped_mm_fallback.default"
  std::string defined_at;  // "file:line" of its Python function (or of the schema's registration)
  std::string module;      // the defining function's module ("" where unknown or the model file)
  int64_t nodes = 0;       // how many of the program's nodes call it
  // Whether the compiled model calls it back through AOTI's proxy executor; nullopt where the
  // package holds no compiled model.
  std::optional<bool> compiled_calls;
};

struct PackageManifest {
  std::string format;
  std::string model_name;
  std::string model_file;
  std::string torch_version;
  std::string torch_git_version;
  std::string cuda_version;  // the CUDA runtime of the torch that built it ("13.0"; "" for a CPU torch)
  int64_t seed = 0;
  std::string inductor_configs_json = "{}";  // the patches, as a JSON object
  bool strict_export = false;
  bool dynamic_shapes = false;
  bool from_program = false;           // packaged from a saved program, not a model file
  std::string reduced_from;            // a reducer candidate: the archive it was cut from
  std::optional<PrebuiltRecord> prebuilt;  // brought in as shipped, not compiled here
  CompileRecord compile;
  std::vector<TensorRecord> inputs;
  std::vector<TensorRecord> eager_outputs;
  std::vector<TensorRecord> eager_fp64_outputs;  // the model run in float64 by Python
  // The model file's own inputs per shape point (its shape_inputs()), by point name.
  std::vector<std::pair<std::string, std::vector<TensorRecord>>> shape_inputs;
  std::vector<PythonOp> python_ops;  // operators written only in Python, sorted by op
  // Why the package holds no program (models/<name>.json) beside its compiled model: torch's
  // serializer could not write it ("torch's serializer cannot write the exported program:
  // node ..."); "" where it holds one.
  std::string program_not_held;
};

// ParsePackageManifest parses package.json text. Throws HarnessError naming `what`
// (the archive path) for malformed JSON, a missing field or an unknown format.
PackageManifest ParsePackageManifest(const std::string& text, const std::string& what);

// PackageManifestToJson: the package.json text of a manifest (format, when empty, is this
// harness' own).
std::string PackageManifestToJson(const PackageManifest& manifest);

}  // namespace aoti
