// Oracle: does a candidate program still fail the way the original did?
//
// A candidate is written as an archive (reducer/candidate_archive.h), compiled by the
// compile server, and checked with the harness' own check (preflight, isolated compiled
// run, interpreter eager + fp64, verdict), so a crash is an answer and not the end. It
// "still fails" when the failure class is the original's (compile error, load error,
// runtime error, the same signal, timeout, accuracy) and, with a check string, the
// message contains it. A candidate that cannot be loaded or compiled by the server
// counts as not failing, with the reason logged. Verdicts are cached by a structural
// hash of the candidate (its program text), so no program is compiled twice; a compile
// server death is retried at once, and a death or timeout is cached only once the same
// candidate has met it twice.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "harness/program/program.h"
#include "harness/archive/pt2_archive.h"
#include "harness/check/check.h"
#include "reducer/compile_cache.h"
#include "reducer/compile_client.h"
#include "reducer/value_store.h"

namespace aoti {

struct Verdict {
  bool fails = false;          // fails the same way as the original
  std::string failure_class;   // what this candidate did ("" when it passed)
  std::string message;
  std::string archive;         // the compiled candidate archive
  std::string not_failing_reason;
  bool cached = false;
};

class Oracle {
 public:
  Oracle(const Pt2Archive& original, std::string model, std::string inductor_configs_json,
         const ValueStore* values, CheckOptions check, CompileClient* client,
         std::string work_dir);

  // UsePool: the compile clients Prefetch spreads a batch over (the constructor's client
  // first); one client, or none given, compiles one candidate at a time.
  void UsePool(std::vector<CompileClient*> clients);
  int jobs() const { return static_cast<int>(pool_.size()); }
  // Prefetch: compiles, on the pool at the same time, those of `candidates` that are not
  // compiled yet (nor in the disk cache), so that Test finds them compiled. No verdict
  // changes: Test still judges candidates one at a time, in the caller's order, so a
  // reduction ends the same whatever the pool size. A no-op with one client.
  void Prefetch(const std::vector<Program>& candidates);
  // Known: Test would answer without a compile (a verdict, or a compile, already made).
  bool Known(const Program& candidate) const;

  // UseDiskCache: compiled candidates are looked up in, and stored to, `cache` (which
  // outlives this oracle), keyed by DiskKey.
  void UseDiskCache(CompileCache* cache);
  // CompileEnvironment: what a compile depends on besides the candidate, read from this
  // host: the C++ compiler inductor runs ($CXX, else g++) with its version line, the torch
  // build (the wheel's git hash, beside the libtorch this process runs), and the GPUs
  // (nvidia-smi's names and compute capabilities; "none" without it). Part of DiskKey.
  static std::string CompileEnvironment();
  // DiskKey: what a compile of `candidate` (given `inputs`) under `configs_json` depends
  // on, hashed.
  std::string DiskKey(const Program& candidate, const std::vector<at::Tensor>& inputs,
                      const std::string& configs_json) const;

  // NoteOriginalFailure: the original's failure message, as the test or the package as built
  // showed it: for a compile error, the kind of error (g++'s CppCompileError, an inductor
  // exception) a candidate must fail with too. Else the first failing verdict sets it.
  void NoteOriginalFailure(const std::string& message) {
    if (target_compile_error_.empty()) target_compile_error_ = CompileErrorKind(message);
  }
  // CompileErrorKind: the error type a compile error's message names ("" for other messages).
  static std::string CompileErrorKind(const std::string& message);
  // SetTarget: the failure to preserve. A hang ("timeout") is judged with the compiled run
  // stopped at the hang timeout (SetHangTimeout) when that is shorter than the case's.
  void SetTarget(std::string failure_class, std::string check_str);
  // SetHangTimeout: how long a candidate's compiled run may go on before it counts as a
  // hang, while the target is one (0: the case's own timeout).
  void SetHangTimeout(double seconds) { hang_timeout_s_ = seconds; }
  const std::string& target_class() const { return target_class_; }

  Verdict Test(const Program& candidate);
  // SkipExportErrors: false makes a candidate the server cannot load abort the reduction
  // (ReducerError) instead of counting as not failing.
  void SkipExportErrors(bool skip) { skip_export_errors_ = skip; }
  // TestWithRandomWeights: the candidate with random weights of the same shape, dtype, mean
  // and std (CandidateWeights::kRandom) compiled (one compile, counted, never cached: its
  // program is the candidate's) and checked. Its archive holds no weight of the model.
  Verdict TestWithRandomWeights(const Program& candidate);
  // Rerun: check an already compiled candidate again (no compile), for flakiness.
  Verdict Rerun(const Program& candidate);

  // CompileAndRun: the candidate compiled (counted, cached like Test) and run in the
  // isolated runner; false with the reason when it cannot be compiled or run.
  bool CompileAndRun(const Program& candidate, std::vector<at::Tensor>* outputs, std::string* problem);

  // Compiled: what the compile server said about a candidate compiled so far (the
  // compiler's output for a compile error); nullptr when it has not been compiled.
  // With `extra_configs_json`: its compile with those configs merged (RunWithConfigs',
  // Diagnose's).
  const CompileResult* Compiled(const Program& candidate, const std::string& extra_configs_json = "") const;

  // RunWithConfigs: the candidate compiled with extra inductor configs (a JSON object
  // merged over the run's; one compile, counted and cached) and run once in the isolated
  // runner, for what it prints. False with the reason when it cannot be compiled.
  // `run_env`: more environment for that run's child (KernelPrinterEnv).
  bool RunWithConfigs(const Program& candidate, const std::string& extra_configs_json, CompiledOutcome* outcome,
                      std::string* problem, const std::vector<std::pair<std::string, std::string>>& run_env = {});

  // Diagnose: the sanity check of `candidate` made on a diagnostic form of it, so that one
  // compile both confirms the failure and diagnoses it. `form` is the candidate itself,
  // or a program that computes the candidate's outputs first and more after them (its
  // intermediates exposed); `extra_configs_json` is merged over the run's configs ("" for
  // none). The verdict judges the candidate's own outputs only, and is not cached as the
  // candidate's (its plain compile is a different one). When it fails the same way (or, no
  // target set yet, fails at all: its class is then the one to preserve), the run is
  // kept: RunWithConfigs and CompileAndRun of the same form then answer from it, with no
  // compile and no run.
  Verdict Diagnose(const Program& candidate, const Program& form, const std::string& extra_configs_json,
                   const std::vector<std::pair<std::string, std::string>>& run_env = {});
  // TestWithConfigs: `candidate` compiled with extra inductor configs (a JSON object, merged
  // over the run's) and judged as Test judges it; `run_seconds`, when given, gets its
  // compiled run's wall time. The verdict is not kept as the candidate's own.
  Verdict TestWithConfigs(const Program& candidate, const std::string& extra_configs_json, double* run_seconds = nullptr);
  // configs_json: the run's inductor configs (the package's, or the ones it was told).
  const std::string& configs_json() const { return configs_; }
  // device: the original's AOTI device ("cpu", "cuda").
  std::string device() const { return original_.DeviceType(model_); }

  std::vector<at::Tensor> InputsFor(const Program& candidate) const;
  const Pt2Archive& original() const { return original_; }
  const std::string& model() const { return model_; }
  const CheckOptions& check() const { return check_; }
  // SetVotes: candidates are judged by `votes` runs from now on (a flaky failure).
  void SetVotes(int votes) { check_.votes = votes; }
  const ValueStore& values() const { return *values_; }
  static std::string Key(const Program& candidate);

  int compiles() const { return compiles_; }
  int cache_hits() const { return cache_hits_; }
  int disk_cache_hits() const { return disk_hits_; }
  int runs() const { return runs_; }
  // speculative_compiles: compiles Prefetch made that no Test asked for (the price of the
  // pool), counted in compiles() too.
  int speculative_compiles() const { return static_cast<int>(prefetched_.size()); }
  double compile_seconds() const { return compile_seconds_; }

 private:
  // Judge: the harness' check of a compiled archive; `judged_outputs` as CheckOptions'
  // (0: all), `outcome` (optional) gets the compiled run.
  Verdict Judge(const Program& candidate, const std::string& archive, size_t judged_outputs = 0,
                CompiledOutcome* outcome = nullptr, const std::vector<std::pair<std::string, std::string>>& run_env = {});
  // JudgeVariant: `form` compiled with extra configs and judged on `candidate`'s own user
  // outputs (Diagnose's and TestWithConfigs' shared step); `ran`: whether it was compiled
  // and run (false when it left no archive), `outcome` then that run.
  Verdict JudgeVariant(const Program& candidate, const Program& form, const std::string& extra_configs_json,
                       const std::vector<std::pair<std::string, std::string>>& run_env, CompiledOutcome* outcome,
                       bool* ran);
  // SameCompileErrorKind: not a compile error target, or the message's kind of compile
  // error is the original's (set from it when not known yet).
  bool SameCompileErrorKind(const std::string& message);
  // NotCompiled: the verdict on a candidate that left no archive to run (torch.export
  // could not load it, or the server timed out or died); nullopt when there is one.
  static std::optional<Verdict> NotCompiled(const CompileResult& c);
  // VariantKey: the key of `candidate` compiled with extra configs; MergedConfigs: the
  // run's configs with them.
  static std::string VariantKey(const Program& candidate, const std::string& extra_configs_json);
  std::string MergedConfigs(const std::string& extra_configs_json) const;
  // Compile: the compiled archive of a candidate, compiled once; phase as the server said.
  CompileResult Compile(const Program& candidate, const std::string& key);
  CompileResult Compile(const Program& candidate, const std::string& key, const std::string& configs_json);
  // A compile to make: the candidate's archive written, where the result goes.
  struct PendingCompile {
    std::string key, program_path, compiled_path, disk_key;
  };
  // Prepare: nullopt when the candidate is compiled already, in this run or (then kept in
  // compiled_) in the disk cache; else its archive, written.
  std::optional<PendingCompile> Prepare(const Program& candidate, const std::string& key,
                                        const std::string& configs_json);
  // Keep: a compile's result counted, stored on disk and remembered (not a transient one).
  CompileResult Keep(const PendingCompile& pending, CompileResult result);

  const Pt2Archive& original_;
  std::string model_, configs_;
  const ValueStore* values_;
  CheckOptions check_;
  double hang_timeout_s_ = 0;
  CompileClient* client_;
  std::vector<CompileClient*> pool_;
  std::set<std::string> prefetched_;  // compiled by Prefetch, not tested yet
  std::string work_dir_;
  std::string target_class_, check_str_;
  std::string target_compile_error_;  // the original's kind of compile error (NoteOriginalFailure)
  std::map<std::string, Verdict> cache_;
  std::map<std::string, int> transient_failures_;  // server deaths and timeouts, by key
  std::map<std::string, CompileResult> compiled_;
  std::map<std::string, CompiledOutcome> diagnosed_;  // Diagnose's runs, by variant key
  int compiles_ = 0, cache_hits_ = 0, runs_ = 0, disk_hits_ = 0;
  CompileCache* disk_ = nullptr;
  std::string state_digest_;  // the weights and constants, hashed once for the disk keys
  std::string host_isa_;      // this host's CPU flags that change AOTI's code, read once for the disk keys
  std::string harness_;       // the harness's version and its compile tools' digest, for the disk keys
  std::string compile_environment_;  // CompileEnvironment(), read once for the disk keys
  std::string op_libraries_digest_;  // the op libraries' contents, hashed once for the disk keys
  bool skip_export_errors_ = true;
  double compile_seconds_ = 0;
};

}  // namespace aoti
