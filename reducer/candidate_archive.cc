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

#include "harness/util/errors.h"
#include "harness/archive/package_manifest.h"
#include "harness/program/program_signature.h"
#include "harness/archive/tensor_io.h"
#include "harness/util/strings.h"

namespace aoti {
namespace {

using json = nlohmann::json;

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

// The weights and constants a candidate still uses, and nothing else: a repro of a few
// nodes carries their tensors, not the model's. Where the archive has no config for the
// model (another layout), every payload record is kept.
class Payload {
 public:
  Payload(const Pt2Archive& original, const std::string& model, const Program& program)
      : weights_config_("data/weights/" + model + "_weights_config.json"),
        constants_config_("data/constants/" + model + "_constants_config.json") {
    std::set<std::string> used_state;
    for (const auto& s : program.input_specs) {
      if (!s.target.empty()) used_state.insert(s.target);
    }
    const std::vector<std::string> names = original.Records();
    have_.insert(names.begin(), names.end());
    if (have_.count(weights_config_)) {
      filtered_[weights_config_] = FilterConfig(original.ReadRecord(weights_config_), used_state,
                                                original.path() + ": " + weights_config_, &kept_weights_, &weight_dtypes_);
    }
    if (have_.count(constants_config_)) {
      filtered_[constants_config_] = FilterConfig(original.ReadRecord(constants_config_), used_state,
                                                  original.path() + ": " + constants_config_, &kept_constants_,
                                                  &constant_dtypes_);
    }
  }

  bool Kept(const std::string& rec) const {
    return Kept(rec, "data/weights/", weights_config_, kept_weights_) &&
           Kept(rec, "data/constants/", constants_config_, kept_constants_);
  }

  // Record: what the candidate holds under `rec`: a config filtered to the kept entries,
  // random values of the same dtype, mean and std (kRandom, for a floating record every
  // entry reads as one dtype), or the original's bytes.
  std::string Record(const Pt2Archive& original, const std::string& rec, CandidateWeights weights) {
    auto f = filtered_.find(rec);
    if (f != filtered_.end()) return f->second;
    std::string data = original.ReadRecord(rec);
    if (weights != CandidateWeights::kRandom) return data;
    for (const auto& [dir, dtypes] : {std::make_pair(std::string("data/weights/"), &weight_dtypes_),
                                      std::make_pair(std::string("data/constants/"), &constant_dtypes_)}) {
      if (!StartsWith(rec, dir)) continue;
      auto it = dtypes->find(rec.substr(dir.size()));
      if (it == dtypes->end() || it->second.size() != 1 || *it->second.begin() < 0) return data;
      c10::ScalarType dtype;
      try {
        dtype = ScalarTypeFromSchema(*it->second.begin(), rec);
      } catch (const HarnessError&) {
        return data;
      }
      return at::isFloatingType(dtype) ? RandomLike(data, dtype, ++seed_) : data;
    }
    return data;
  }

 private:
  bool Kept(const std::string& rec, const std::string& dir, const std::string& config,
            const std::set<std::string>& kept) const {
    if (!StartsWith(rec, dir)) return true;
    if (EndsWith(rec, "_config.json")) return rec == config;  // another model's config goes
    if (!have_.count(config)) return true;
    return kept.count(rec.substr(dir.size())) > 0;
  }

  const std::string weights_config_, constants_config_;
  std::set<std::string> have_;
  std::set<std::string> kept_weights_, kept_constants_;
  std::map<std::string, std::string> filtered_;
  std::map<std::string, std::set<int>> weight_dtypes_, constant_dtypes_;  // schema dtype codes by record
  uint64_t seed_ = 0;
};

// CandidateManifest: the candidate's package.json: the original's provenance, the
// candidate's model, configs and inputs, compiled by the server (not here).
PackageManifest CandidateManifest(const Pt2Archive& original, const std::string& model,
                                  const std::string& inductor_configs_json, std::vector<TensorRecord> inputs) {
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
  manifest.inputs = std::move(inputs);
  manifest.reduced_from = original.path();
  return manifest;
}

}  // namespace

void WriteCandidateArchive(const Pt2Archive& original, const std::string& model, const Program& program,
                           const std::vector<at::Tensor>& inputs, const std::string& inductor_configs_json,
                           const std::string& out_path, CandidateWeights weights) {
  const std::string tmp = out_path + ".partial.pt2";
  try {
    caffe2::serialize::PyTorchStreamWriter w(tmp);
    w.setMinVersion(6);
    auto write = [&](const std::string& name, const std::string& data) {
      w.writeRecord(name, data.data(), data.size());
    };
    const std::set<std::string> skip_exact = {".data/version", "byteorder", ".data/serialization_id",
                                              "models/" + model + ".json", "extra/aoti_harness/package.json"};
    Payload payload(original, model, program);
    for (const auto& rec : original.Records()) {
      if (skip_exact.count(rec) || StartsWith(rec, "data/aotinductor/") || StartsWith(rec, "data/sample_inputs/") ||
          StartsWith(rec, "aoti_harness/")) {
        continue;
      }
      // Another model of a multi-model archive goes with its weights.
      if (StartsWith(rec, "models/") && EndsWith(rec, ".json")) continue;
      if (payload.Kept(rec)) write(rec, payload.Record(original, rec, weights));
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
    write("extra/aoti_harness/package.json",
          PackageManifestToJson(CandidateManifest(original, model, inductor_configs_json, std::move(records))));
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
