#include "reducer/candidate_archive.h"

#include <cstdio>
#include <set>

#include <caffe2/serialize/inline_container.h>
#include <c10/util/Exception.h>
#include <nlohmann/json.hpp>

#include "harness/errors.h"
#include "harness/package_manifest.h"
#include "harness/tensor_io.h"

namespace aoti {
namespace {

using json = nlohmann::json;

bool StartsWith(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// Filter a payload config (weights or constants) to the FQNs the program still uses.
std::string FilterConfig(const std::string& text, const std::set<std::string>& used) {
  json j = json::parse(text);
  json& config = j["config"];
  for (auto it = config.begin(); it != config.end();) {
    if (used.count(it.key())) ++it;
    else it = config.erase(it);
  }
  return j.dump();
}

}  // namespace

void WriteCandidateArchive(const Pt2Archive& original, const std::string& model, const Program& program,
                           const std::vector<at::Tensor>& inputs, const std::string& inductor_configs_json,
                           const std::string& out_path) {
  std::set<std::string> used_state;
  for (const auto& s : program.input_specs) {
    if (!s.target.empty()) used_state.insert(s.target);
  }
  const std::string tmp = out_path + ".partial.pt2";
  try {
    caffe2::serialize::PyTorchStreamWriter w(tmp);
    w.setMinVersion(6);
    auto write = [&](const std::string& name, const std::string& data) {
      w.writeRecord(name, data.data(), data.size());
    };
    const std::string weights_config = "data/weights/" + model + "_weights_config.json";
    const std::string constants_config = "data/constants/" + model + "_constants_config.json";
    std::set<std::string> skip_exact = {".data/version", "byteorder", ".data/serialization_id",
                                        "models/" + model + ".json", "extra/aoti_harness/package.json"};
    for (const auto& rec : original.Records()) {
      if (skip_exact.count(rec) || StartsWith(rec, "data/aotinductor/") || StartsWith(rec, "data/sample_inputs/") ||
          StartsWith(rec, "aoti_harness/")) {
        continue;
      }
      if (rec == weights_config || rec == constants_config) {
        write(rec, FilterConfig(original.ReadRecord(rec), used_state));
      } else {
        write(rec, original.ReadRecord(rec));
      }
    }
    write("models/" + model + ".json", program.ToJson());
    std::vector<TensorRecord> records;
    for (size_t i = 0; i < inputs.size(); ++i) {
      // The input's own layout: a cut at a transpose or an expand stays that layout.
      const RawTensor raw =
          EncodeRawTensor(inputs[i], "input_" + std::to_string(i), "tensors/input_" + std::to_string(i) + ".bin");
      write("aoti_harness/" + raw.record.file, raw.bytes);
      records.push_back(raw.record);
    }
    PackageManifest manifest;
    if (const auto& m = original.Manifest()) {
      manifest.model_file = m->model_file;
      manifest.seed = m->seed;
      manifest.torch_version = m->torch_version;
      manifest.torch_git_version = m->torch_git_version;
      manifest.cuda_version = m->cuda_version;
    }
    manifest.model_name = model;
    manifest.inductor_configs_json = inductor_configs_json;
    manifest.from_program = true;
    manifest.compile.status = "skipped";
    manifest.inputs = std::move(records);
    manifest.reduced_from = original.path();
    write("extra/aoti_harness/package.json", PackageManifestToJson(manifest));
    w.writeEndOfFile();
  } catch (const c10::Error& e) {
    std::remove(tmp.c_str());
    throw HarnessError(out_path + ": cannot write the candidate archive: " + e.what_without_backtrace());
  }
  if (std::rename(tmp.c_str(), out_path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw HarnessError(out_path + ": cannot move the candidate archive into place");
  }
}

}  // namespace aoti
