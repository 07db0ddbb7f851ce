#include "reducer/oracle.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <thread>

#include <glog/logging.h>
#include <nlohmann/json.hpp>
#include <c10/core/CPUAllocator.h>
#include <torch/headeronly/version.h>

#include "harness/util/errors.h"
#include "harness/util/failure_class.h"
#include "harness/check/preflight.h"
#include "harness/util/version.h"
#include "harness/util/subprocess.h"
#include "harness/archive/tensor_bundle.h"
#include "reducer/candidate_archive.h"
#include "reducer/graph_edit.h"

namespace aoti {
namespace fs = std::filesystem;
namespace {

// The libtorch this binary runs with (the compile server's torch is the same wheel).
std::string TorchVersion() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

// TorchGitVersion: git_version from the version.py of the torch whose libraries this
// process runs (<torch>/lib/libc10.so -> <torch>/version.py); "" when not found.
std::string TorchGitVersion() {
  Dl_info info;
  if (!::dladdr(reinterpret_cast<void*>(&c10::GetCPUAllocator), &info) || !info.dli_fname) return "";
  std::error_code ec;
  const std::filesystem::path lib = std::filesystem::canonical(info.dli_fname, ec);  // past Bazel's symlinks
  if (ec) return "";
  const std::filesystem::path version = lib.parent_path().parent_path() / "version.py";
  std::ifstream in(version);
  static const std::regex git(R"(^git_version\s*=\s*['"]([0-9a-fA-F]+)['"])");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, git)) return m.str(1);
  }
  return "";
}

}  // namespace

std::string Oracle::CompileEnvironment() {
  const char* cxx_env = std::getenv("CXX");
  const std::string cxx = cxx_env && *cxx_env ? cxx_env : "g++";
  // Probed once per compiler and process: a probe that a loaded machine let time out must
  // not give a later oracle of this process another key for the same compiles.
  static std::mutex mu;
  static std::map<std::string, std::string>* probed = new std::map<std::string, std::string>;
  std::string version;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = probed->find(cxx); it != probed->end()) version = it->second;
  }
  if (version.empty()) {
    const std::string printed = CommandOutput("'" + cxx + "' --version");
    version = printed.substr(0, printed.find('\n'));
    std::lock_guard<std::mutex> lock(mu);
    if (!version.empty()) (*probed)[cxx] = version;
  }
  std::string gpus = "none";
  try {
    const std::string smi = FindExecutable("nvidia-smi");
    std::string listed = CommandOutput("'" + smi + "' --query-gpu=name,compute_cap --format=csv,noheader");
    for (size_t at = listed.find('\n'); at != std::string::npos; at = listed.find('\n', at)) listed.replace(at, 1, "; ");
    if (!listed.empty()) gpus = listed;
  } catch (const HarnessError&) {
  }
  const std::string git = TorchGitVersion();
  return "compiler " + cxx + " (" + (version.empty() ? "version unknown" : version) + "); torch " + TorchVersion() +
         " git " + (git.empty() ? "unknown" : git) + "; gpus " + gpus;
}

Oracle::Oracle(const Pt2Archive& original, std::string model, std::string inductor_configs_json,
               const ValueStore* values, CheckOptions check, CompileClient* client,
               std::string work_dir)
    : original_(original),
      model_(std::move(model)),
      configs_(std::move(inductor_configs_json)),
      values_(values),
      check_(std::move(check)),
      client_(client),
      work_dir_(std::move(work_dir)) {
  if (client_) pool_.push_back(client_);
}

void Oracle::UsePool(std::vector<CompileClient*> clients) {
  pool_.clear();
  if (client_) pool_.push_back(client_);
  for (CompileClient* c : clients) {
    if (c && c != client_) pool_.push_back(c);
  }
}

bool Oracle::Known(const Program& candidate) const {
  const std::string key = Key(candidate);
  return cache_.count(key) > 0 || compiled_.count(key) > 0;
}

void Oracle::Prefetch(const std::vector<Program>& candidates) {
  if (pool_.size() <= 1) return;
  // Archives are written here, on this thread (tensors, zip); only the compiles run on
  // the pool's threads, one per server.
  std::vector<PendingCompile> jobs;
  std::set<std::string> seen;
  for (const Program& candidate : candidates) {
    const std::string key = Key(candidate);
    if (candidate.nodes.empty() || cache_.count(key) || !seen.insert(key).second) continue;
    if (auto p = Prepare(candidate, key, configs_)) jobs.push_back(std::move(*p));
  }
  std::vector<CompileResult> results(jobs.size());
  std::vector<std::exception_ptr> errors(jobs.size());
  for (size_t wave = 0; wave < jobs.size(); wave += pool_.size()) {
    std::vector<std::thread> threads;
    for (size_t i = wave; i < std::min(jobs.size(), wave + pool_.size()); ++i) {
      threads.emplace_back([&, i, wave] {
        try {
          results[i] = pool_[i - wave]->Compile(jobs[i].program_path, jobs[i].compiled_path, configs_);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    }
    for (auto& t : threads) t.join();
  }
  std::exception_ptr error;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (errors[i]) {  // a server could not be started at all
      std::remove(jobs[i].program_path.c_str());
      if (!error) error = errors[i];
      continue;
    }
    // A server death or timeout is not kept: Test meets it (and retries) itself.
    Keep(jobs[i], results[i]);
    if (compiled_.count(jobs[i].key)) prefetched_.insert(jobs[i].key);
  }
  if (error) std::rethrow_exception(error);
}

void Oracle::UseDiskCache(CompileCache* cache) {
  disk_ = cache && cache->enabled() ? cache : nullptr;
  if (!disk_ || !state_digest_.empty()) return;
  // Only the flags that change the code (not the hypervisor's or the mitigations'), so
  // that machines of one fleet share entries.
  host_isa_ = CodegenCpuFlags(DetectHost().cpu_flags);
  compile_environment_ = CompileEnvironment();
  // The harness's version and the code that compiles (the compile server, the packager and
  // the module that applies the harness's keys), by contents.
  std::vector<std::string> tools = {kHarnessVersion};
  const fs::path server = client_ ? client_->options().server_script : "";
  std::vector<std::string> names = {"compile_server.py", "package_model.py", "aoti_aten_fallbacks.py"};
  // The packager's modules (tools/aoti_package/), in name order.
  std::vector<std::string> modules;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(server.parent_path() / "aoti_package", ec)) {
    if (e.path().extension() == ".py") modules.push_back("aoti_package/" + e.path().filename().string());
  }
  std::sort(modules.begin(), modules.end());
  names.insert(names.end(), modules.begin(), modules.end());
  for (const std::string& name : names) {
    try {
      tools.push_back(CompileCache::Key({ReadTextFile((server.parent_path() / name).string())}));
    } catch (const HarnessError&) {
      tools.push_back(name);
    }
  }
  harness_ = CompileCache::Key(tools);
  // Candidates read the original's weights and constants: the same program over other
  // weights is another compile.
  std::vector<std::string> parts;
  for (const auto& rec : original_.Records()) {
    if (rec.rfind("data/weights/", 0) == 0 || rec.rfind("data/constants/", 0) == 0) {
      parts.push_back(rec);
      parts.push_back(CompileCache::Key({original_.ReadRecord(rec)}));
    }
  }
  state_digest_ = CompileCache::Key(parts);
  // The op libraries by their contents: a case moved elsewhere (its libraries copied
  // beside it) hits the same entries.
  std::vector<std::string> libraries;
  for (const auto& l : check_.runner.op_libraries) {
    try {
      libraries.push_back(CompileCache::Key({ReadTextFile(l)}));
    } catch (const HarnessError&) {
      libraries.push_back(l);
    }
  }
  op_libraries_digest_ = CompileCache::Key(libraries);
}

std::string Oracle::DiskKey(const Program& candidate, const std::vector<at::Tensor>& candidate_inputs,
                            const std::string& configs_json) const {
  std::string inputs;
  for (const auto& t : candidate_inputs) {
    inputs += std::string(c10::toString(t.scalar_type())) + "[";
    for (auto s : t.sizes()) inputs += std::to_string(s) + ",";
    inputs += "]/[";
    for (auto s : t.strides()) inputs += std::to_string(s) + ",";
    inputs += "]" + t.device().str() + ";";
  }
  // The modules the server may import to read the candidate: an answer read without one
  // (a load error) is not the answer with it.
  std::string pytree_modules;
  for (const auto& m : check_.runner.pytree_modules) pytree_modules += m + ",";
  std::string configs = configs_json;
  try {
    configs = nlohmann::json::parse(configs_json).dump();  // canonical: sorted keys
  } catch (const nlohmann::json::exception&) {
  }
  return CompileCache::Key({"program", candidate.ToJson(), "model", model_, "inputs", inputs, "state", state_digest_,
                            "configs", configs, "torch", TorchVersion(), "isa", host_isa_, "harness", harness_, "op_libraries",
                            op_libraries_digest_, "pytree_modules", pytree_modules, "environment", compile_environment_});
}

void Oracle::SetTarget(std::string failure_class, std::string check_str) {
  target_class_ = std::move(failure_class);
  check_str_ = std::move(check_str);
  if (Is(target_class_, FailureClass::kTimeout) && hang_timeout_s_ > 0) {
    check_.runner.timeout_s = std::min(check_.runner.timeout_s, hang_timeout_s_);
  }
}

std::string Oracle::Key(const Program& candidate) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%016zx", std::hash<std::string>()(candidate.ToJson()));
  return buf;
}

std::vector<at::Tensor> Oracle::InputsFor(const Program& candidate) const {
  std::vector<at::Tensor> inputs;
  for (const auto& name : UserInputNames(candidate)) inputs.push_back(values_->Get(name));
  return inputs;
}

Verdict Oracle::Judge(const Program& candidate, const std::string& archive, size_t judged_outputs,
                      CompiledOutcome* outcome, const std::vector<std::pair<std::string, std::string>>& run_env) {
  ++runs_;
  Verdict v;
  v.archive = archive;
  const std::vector<at::Tensor> inputs = InputsFor(candidate);
  CheckOptions check = check_;
  check.model = model_;
  check.judged_outputs = judged_outputs;
  check.runner.env.insert(check.runner.env.end(), run_env.begin(), run_env.end());
  // A candidate's verdict needs no failure rate; a flaky case's votes (check.votes) stay.
  check.reruns = 0;
  CheckReport r = CheckAotiMatchesEager(archive, &inputs, check);
  if (outcome) *outcome = std::move(r.outcome);
  v.failure_class = r.pass ? "" : r.failure_class;
  v.message = r.message;
  v.fails = !r.pass && r.failure_class == target_class_ &&
            (check_str_.empty() || r.message.find(check_str_) != std::string::npos);
  if (!v.fails) {
    v.not_failing_reason = r.pass ? "passes" : "fails differently (" + r.failure_class + "): " +
                                                   r.message.substr(0, 400);
    if (!r.pass && r.failure_class == target_class_) v.not_failing_reason = "message lacks the check string";
  } else if (!SameCompileErrorKind(r.message)) {
    v.fails = false;
    v.not_failing_reason = "fails as a compile error of another kind (" + CompileErrorKind(r.message) +
                           "; the original's: " + target_compile_error_ + "): " + r.message.substr(0, 300);
  }
  return v;
}

std::string Oracle::CompileErrorKind(const std::string& message) {
  static const std::regex kind(R"(the AOTI compile failed when the package was built \(([^)]*)\))");
  std::smatch m;
  return std::regex_search(message, m, kind) ? m.str(1) : "";
}

bool Oracle::SameCompileErrorKind(const std::string& message) {
  if (!Is(target_class_, FailureClass::kCompileError)) return true;
  const std::string kind = CompileErrorKind(message);
  if (kind.empty()) return true;
  if (target_compile_error_.empty()) target_compile_error_ = kind;  // the first seen is the original's
  return kind == target_compile_error_;
}

std::optional<Verdict> Oracle::NotCompiled(const CompileResult& c) {
  if (c.phase == "done" || c.phase == "compile") return std::nullopt;
  Verdict v;
  v.failure_class = c.phase == "load" ? "export error" : "compile server " + c.phase;
  v.not_failing_reason = v.failure_class + ": " + c.error_type + " " + c.message.substr(0, 300);
  return v;
}

Verdict Oracle::Test(const Program& candidate) {
  const std::string key = Key(candidate);
  prefetched_.erase(key);
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    ++cache_hits_;
    Verdict v = it->second;
    v.cached = true;
    return v;
  }
  CompileResult c = Compile(candidate, key);
  if (c.phase == "server") {
    // The server died or spoke nonsense; the client restarts it. One more try before
    // this candidate is called "not failing" on account of the server.
    LOG(WARNING) << c.message << "; restarting the compile server and trying the candidate again";
    c = Compile(candidate, key);
  }
  const std::string compiled_path = c.out;
  Verdict v;
  if (std::optional<Verdict> no_archive = NotCompiled(c)) {
    v = *no_archive;
    if (c.phase == "load" && !skip_export_errors_) {
      throw HarnessError("a candidate could not be loaded by torch.export (--noskip_export_error): " +
                         v.not_failing_reason);
    }
  } else {
    v = Judge(candidate, compiled_path);
  }
  // The harness' own trouble is never remembered as the candidate's verdict: the server
  // could not read the request or write the archive, or the archive it wrote is gone (a
  // harness error on a missing file). A server death or a timeout may be transient (a
  // loaded machine): not remembered until the same candidate has met it twice.
  std::error_code ec;
  // Nor is a run the process' deadline stopped (out of time, not the candidate's doing).
  const bool harness_trouble = c.phase == "write" || c.phase == "request" ||
                               (Is(v.failure_class, FailureClass::kHarnessError) &&
                                (!std::filesystem::exists(compiled_path, ec) || check_.runner.deadline.Passed()));
  const bool transient = c.phase == "timeout" || c.phase == "server";
  if (harness_trouble) {
    compiled_.erase(key);
  } else if (!transient || ++transient_failures_[key] >= 2) {
    cache_[key] = v;
  }
  return v;
}

CompileResult Oracle::Compile(const Program& candidate, const std::string& key) {
  return Compile(candidate, key, configs_);
}

std::optional<Oracle::PendingCompile> Oracle::Prepare(const Program& candidate, const std::string& key,
                                                     const std::string& configs_json) {
  if (compiled_.count(key)) return std::nullopt;
  PendingCompile p;
  p.key = key;
  p.program_path = work_dir_ + "/cand_" + key + ".pt2";
  p.compiled_path = work_dir_ + "/cand_" + key + "_aoti.pt2";
  // The inputs once (read back from disk under --offload_to_disk): for the key and the archive.
  const std::vector<at::Tensor> inputs = InputsFor(candidate);
  if (disk_) {
    p.disk_key = DiskKey(candidate, inputs, configs_json);
    if (auto hit = disk_->Lookup(p.disk_key, p.compiled_path)) {
      ++disk_hits_;
      if (hit->out.empty()) hit->out = p.compiled_path;
      compiled_[key] = *hit;
      return std::nullopt;
    }
  }
  WriteCandidateArchive(original_, model_, candidate, inputs, configs_json, p.program_path);
  return p;
}

Verdict Oracle::TestWithRandomWeights(const Program& candidate) {
  const std::string key = Key(candidate) + "_random_weights";
  const std::string program_path = work_dir_ + "/cand_" + key + ".pt2";
  const std::string compiled_path = work_dir_ + "/cand_" + key + "_aoti.pt2";
  WriteCandidateArchive(original_, model_, candidate, InputsFor(candidate), configs_, program_path,
                        CandidateWeights::kRandom);
  CompileResult c = client_->Compile(program_path, compiled_path, configs_);
  if (c.started) ++compiles_;  // one refused at the deadline made no compile
  compile_seconds_ += c.seconds;
  std::remove(program_path.c_str());
  if (std::optional<Verdict> no_archive = NotCompiled(c)) return *no_archive;
  return Judge(candidate, c.out.empty() ? compiled_path : c.out);
}

CompileResult Oracle::Keep(const PendingCompile& p, CompileResult c) {
  if (c.started) ++compiles_;  // one refused at the deadline made no compile
  compile_seconds_ += c.seconds;
  std::remove(p.program_path.c_str());
  if (c.out.empty()) c.out = p.compiled_path;
  // What a compile decides (compiled, a compile error, an export error) is kept for later
  // runs; a timeout or a server death is not.
  if (disk_ && (c.phase == "done" || c.phase == "compile" || c.phase == "load")) disk_->Store(p.disk_key, c, c.out);
  if (c.phase == "done" || c.phase == "compile" || c.phase == "load") compiled_[p.key] = c;
  return c;
}

CompileResult Oracle::Compile(const Program& candidate, const std::string& key, const std::string& configs_json) {
  const std::optional<PendingCompile> p = Prepare(candidate, key, configs_json);
  if (!p) return compiled_.at(key);
  return Keep(*p, client_->Compile(p->program_path, p->compiled_path, configs_json));
}

std::string Oracle::VariantKey(const Program& candidate, const std::string& extra_configs_json) {
  if (extra_configs_json.empty()) return Key(candidate);
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "_%08zx", std::hash<std::string>()(extra_configs_json) & 0xffffffffu);
  return Key(candidate) + suffix;
}

std::string Oracle::MergedConfigs(const std::string& extra_configs_json) const {
  if (extra_configs_json.empty()) return configs_;
  nlohmann::json configs;
  try {
    configs = nlohmann::json::parse(configs_);
    configs.update(nlohmann::json::parse(extra_configs_json));
  } catch (const nlohmann::json::exception& e) {
    throw HarnessError(std::string("inductor configs are not a JSON object: ") + e.what());
  }
  return configs.dump();
}

Verdict Oracle::JudgeVariant(const Program& candidate, const Program& form, const std::string& extra_configs_json,
                             const std::vector<std::pair<std::string, std::string>>& run_env, CompiledOutcome* outcome,
                             bool* ran) {
  *ran = false;
  const CompileResult c = Compile(form, VariantKey(form, extra_configs_json), MergedConfigs(extra_configs_json));
  if (std::optional<Verdict> no_archive = NotCompiled(c)) return *no_archive;
  size_t own_outputs = 0;
  for (const auto& s : candidate.output_specs) own_outputs += s.kind == OutputKind::kUserOutput;
  *ran = true;
  return Judge(form, c.out, own_outputs, outcome, run_env);
}

Verdict Oracle::Diagnose(const Program& candidate, const Program& form, const std::string& extra_configs_json,
                         const std::vector<std::pair<std::string, std::string>>& run_env) {
  CompiledOutcome outcome;
  bool ran = false;
  const Verdict v = JudgeVariant(candidate, form, extra_configs_json, run_env, &outcome, &ran);
  // Kept only when it showed the failure: else the strategies diagnose as usual.
  if (ran && (v.fails || (target_class_.empty() && !v.failure_class.empty()))) {
    diagnosed_[VariantKey(form, extra_configs_json)] = std::move(outcome);
  }
  return v;
}

Verdict Oracle::TestWithConfigs(const Program& candidate, const std::string& extra_configs_json, double* run_seconds) {
  CompiledOutcome outcome;
  bool ran = false;
  const Verdict v = JudgeVariant(candidate, candidate, extra_configs_json, {}, &outcome, &ran);
  if (run_seconds && ran) *run_seconds = outcome.seconds;
  return v;
}

bool Oracle::CompileAndRun(const Program& candidate, std::vector<at::Tensor>* outputs, std::string* problem) {
  if (auto d = diagnosed_.find(Key(candidate)); d != diagnosed_.end() && d->second.ok()) {
    *outputs = d->second.outputs;
    return true;
  }
  const CompileResult c = Compile(candidate, Key(candidate));
  if (c.phase == "load" || c.phase == "timeout" || c.phase == "server") {
    *problem = c.phase + ": " + c.message.substr(0, 300);
    return false;
  }
  ++runs_;
  CompiledOutcome o = RunCompiled(c.out, model_, InputsFor(candidate), check_.runner);
  if (!o.ok()) {
    *problem = o.Summary().substr(0, 300);
    return false;
  }
  *outputs = std::move(o.outputs);
  return true;
}

const CompileResult* Oracle::Compiled(const Program& candidate, const std::string& extra_configs_json) const {
  auto it = compiled_.find(VariantKey(candidate, extra_configs_json));
  return it == compiled_.end() ? nullptr : &it->second;
}

bool Oracle::RunWithConfigs(const Program& candidate, const std::string& extra_configs_json, CompiledOutcome* outcome,
                            std::string* problem, const std::vector<std::pair<std::string, std::string>>& run_env) {
  const std::string key = VariantKey(candidate, extra_configs_json);
  if (auto d = diagnosed_.find(key); d != diagnosed_.end()) {
    *outcome = d->second;
    return true;
  }
  const CompileResult c = Compile(candidate, key, MergedConfigs(extra_configs_json));
  if (!c.ok) {
    *problem = c.phase + ": " + c.message.substr(0, 300);
    return false;
  }
  ++runs_;
  RunnerOptions runner = check_.runner;
  runner.env.insert(runner.env.end(), run_env.begin(), run_env.end());
  *outcome = RunCompiled(c.out, model_, InputsFor(candidate), runner);
  return true;
}

Verdict Oracle::Rerun(const Program& candidate) {
  const std::string key = Key(candidate);
  auto it = cache_.find(key);
  if (it == cache_.end() || it->second.archive.empty()) return Test(candidate);
  return Judge(candidate, it->second.archive);
}

}  // namespace aoti
