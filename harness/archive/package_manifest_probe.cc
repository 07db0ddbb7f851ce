// package_manifest_probe: the C++ half of //harness/archive:package_manifest_format_test.
//   package_manifest_probe write FILE   a manifest with every field set, as C++ writes it
//   package_manifest_probe read FILE    parse FILE, print it as C++ writes it (exit 1 and
//                                       the error when the parser refuses it)
#include <fstream>
#include <iostream>
#include <sstream>

#include "harness/util/errors.h"
#include "harness/archive/package_manifest.h"

namespace {

aoti::TensorRecord Record(const std::string& name, c10::ScalarType dtype, std::vector<int64_t> sizes,
                          std::vector<int64_t> strides, const std::string& file) {
  aoti::TensorRecord r;
  r.name = name;
  r.dtype = dtype;
  r.sizes = std::move(sizes);
  r.strides = std::move(strides);
  r.file = file;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: package_manifest_probe write|read FILE\n";
    return 64;
  }
  const std::string mode = argv[1], path = argv[2];
  if (mode == "write") {
    aoti::PackageManifest m;
    m.model_name = "model";
    m.model_file = "models/mlp.py";
    m.seed = 7;
    m.torch_version = "2.13.0+cpu";
    m.torch_git_version = "abc123";
    m.cuda_version = "13.0";
    m.inductor_configs_json = R"({"cpp.inject_relu_bug_TESTING_ONLY": "compile_error", "max_autotune": false})";
    m.strict_export = true;
    m.dynamic_shapes = true;
    m.from_program = true;
    m.compile.status = "error";
    m.compile.seconds = 12.5;
    m.compile.error_type = "torch._inductor.exc.CppCompileError";
    m.compile.error_message = "C++ compile error \xE2\x80\x98" "compile\xE2\x80\x99";
    m.compile.compiler_errors = "k.cpp:15:33: error: boom";
    m.compile.error_traceback = "Traceback ...";
    m.inputs = {Record("x", c10::ScalarType::Float, {4, 6}, {1, 4}, "tensors/input_0.bin"),
                Record("mask", c10::ScalarType::Bool, {3, 6}, {0, 1}, "tensors/input_1.bin")};
    m.inputs[0].device = "cuda:0";  // a CUDA package's input, recorded on a CPU-only host
    m.eager_outputs = {Record("out", c10::ScalarType::BFloat16, {}, {}, "tensors/eager_0.bin")};
    m.eager_fp64_outputs = {Record("out", c10::ScalarType::Double, {}, {}, "tensors/eager_fp64_0.bin")};
    m.reduced_from = "/cases/original.pt2";
    m.python_ops = {{"transformers::grouped_mm_fallback.default", "moe.py:12", "transformers.integrations.moe", 2, true},
                    {"corpus_py::soft_clip.default", "model.py:9", "", 1, std::nullopt}};
    m.shape_inputs = {{"min", {Record("x", c10::ScalarType::Float, {1, 6}, {6, 1}, "tensors/shape_min_input_0.bin")}}};
    std::ofstream(path) << aoti::PackageManifestToJson(m);
    return 0;
  }
  if (mode == "read") {
    std::stringstream text;
    text << std::ifstream(path).rdbuf();
    try {
      std::cout << aoti::PackageManifestToJson(aoti::ParsePackageManifest(text.str(), path)) << "\n";
    } catch (const aoti::HarnessError& e) {
      std::cerr << e.what() << "\n";
      return 1;
    }
    return 0;
  }
  std::cerr << "package_manifest_probe: unknown mode " << mode << "\n";
  return 64;
}
