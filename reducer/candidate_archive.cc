#include "reducer/candidate_archive.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <caffe2/serialize/inline_container.h>
#include <c10/util/Exception.h>
#include <nlohmann/json.hpp>

#include "harness/errors.h"
#include "harness/package_manifest.h"
#include "harness/program_signature.h"
#include "harness/tensor_io.h"

namespace aoti {
namespace {

using json = nlohmann::json;

bool StartsWith(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

bool EndsWith(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// RandomLike: `bytes`, a stored record of `dtype` values, replaced by random values of the
// same dtype, mean and standard deviation (the same for the same record and seed).
std::string RandomLike(const std::string& bytes, c10::ScalarType dtype, uint64_t seed) {
  const int64_t item = static_cast<int64_t>(c10::elementSize(dtype));
  if (bytes.empty() || bytes.size() % item != 0) return bytes;
  at::Tensor stored = at::empty({static_cast<int64_t>(bytes.size())}, at::kByte);
  std::memcpy(stored.data_ptr(), bytes.data(), bytes.size());
  const at::Tensor values = stored.view(dtype).to(at::kDouble);
  const at::Tensor finite = values.masked_select(at::isfinite(values));
  const double mean = finite.numel() ? finite.mean().item<double>() : 0.0;
  const double std = finite.numel() > 1 ? finite.std().item<double>() : 0.0;
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const at::Tensor drawn = (at::randn({values.numel()}, gen, at::TensorOptions().dtype(at::kDouble)) * std + mean)
                               .to(dtype)
                               .contiguous();
  return std::string(static_cast<const char*>(drawn.data_ptr()), bytes.size());
}

// FilterConfig: a payload config (weights or constants) cut to the FQNs the program still
// uses; the records those name (path_name) are added to `kept`.
std::string FilterConfig(const std::string& text, const std::set<std::string>& used, const std::string& what,
                         std::set<std::string>* kept, std::map<std::string, std::set<int>>* dtypes) {
  json j = json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("config") || !j["config"].is_object()) {
    throw HarnessError(what + ": expected a JSON object with a \"config\" object");
  }
  json& config = j["config"];
  for (auto it = config.begin(); it != config.end();) {
    if (!used.count(it.key())) {
      it = config.erase(it);
      continue;
    }
    if (it->is_object() && it->contains("path_name") && (*it)["path_name"].is_string()) {
      const std::string path = (*it)["path_name"].get<std::string>();
      kept->insert(path);
      const json* meta = it->contains("tensor_meta") ? &(*it)["tensor_meta"] : nullptr;
      const bool pickled = it->value("use_pickle", false);
      (*dtypes)[path].insert(!pickled && meta && meta->is_object() && meta->contains("dtype") &&
                                     (*meta)["dtype"].is_number_integer()
                                 ? (*meta)["dtype"].get<int>()
                                 : -1);
    }
    ++it;
  }
  return j.dump();
}

}  // namespace

void WriteCandidateArchive(const Pt2Archive& original, const std::string& model, const Program& program,
                           const std::vector<at::Tensor>& inputs, const std::string& inductor_configs_json,
                           const std::string& out_path, CandidateWeights weights) {
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
    // The weights and constants the candidate still uses, and nothing else: a repro of a
    // few nodes carries their tensors, not the model's. Where the archive has no config
    // for the model (another layout), every payload record is kept.
    const std::vector<std::string> names = original.Records();
    const std::set<std::string> have(names.begin(), names.end());
    std::set<std::string> kept_weights, kept_constants;
    std::map<std::string, std::string> filtered;
    std::map<std::string, std::set<int>> weight_dtypes, constant_dtypes;  // schema dtype codes by record
    if (have.count(weights_config)) {
      filtered[weights_config] = FilterConfig(original.ReadRecord(weights_config), used_state,
                                              original.path() + ": " + weights_config, &kept_weights, &weight_dtypes);
    }
    if (have.count(constants_config)) {
      filtered[constants_config] = FilterConfig(original.ReadRecord(constants_config), used_state,
                                                original.path() + ": " + constants_config, &kept_constants,
                                                &constant_dtypes);
    }
    // Random values for a kept floating record that every entry reads as one dtype.
    uint64_t seed = 0;
    auto randomized = [&](const std::string& rec, const std::string& data) {
      if (weights != CandidateWeights::kRandom) return data;
      for (const auto& [dir, dtypes] : {std::make_pair(std::string("data/weights/"), &weight_dtypes),
                                        std::make_pair(std::string("data/constants/"), &constant_dtypes)}) {
        if (!StartsWith(rec, dir)) continue;
        auto it = dtypes->find(rec.substr(dir.size()));
        if (it == dtypes->end() || it->second.size() != 1 || *it->second.begin() < 0) return data;
        c10::ScalarType dtype;
        try {
          dtype = ScalarTypeFromSchema(*it->second.begin(), rec);
        } catch (const HarnessError&) {
          return data;
        }
        if (!at::isFloatingType(dtype)) return data;
        return RandomLike(data, dtype, ++seed);
      }
      return data;
    };
    auto payload_kept = [&](const std::string& rec, const std::string& dir, const std::string& config,
                            const std::set<std::string>& kept) {
      if (!StartsWith(rec, dir)) return true;
      if (EndsWith(rec, "_config.json")) return rec == config;  // another model's config goes
      if (!have.count(config)) return true;
      return kept.count(rec.substr(dir.size())) > 0;
    };
    for (const auto& rec : names) {
      if (skip_exact.count(rec) || StartsWith(rec, "data/aotinductor/") || StartsWith(rec, "data/sample_inputs/") ||
          StartsWith(rec, "aoti_harness/")) {
        continue;
      }
      // Another model of a multi-model archive goes with its weights.
      if (StartsWith(rec, "models/") && EndsWith(rec, ".json")) continue;
      if (!payload_kept(rec, "data/weights/", weights_config, kept_weights) ||
          !payload_kept(rec, "data/constants/", constants_config, kept_constants)) {
        continue;
      }
      auto f = filtered.find(rec);
      write(rec, f != filtered.end() ? f->second : randomized(rec, original.ReadRecord(rec)));
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
