// Reduce: from a failing case (program archive, inputs, inductor config patches, the
// observed failure) to a program with as few nodes as possible that fails the same way.
//
//   1. run the original through the interpreter once, keeping every value (cut edges
//      become inputs with these values);
//   2. sanity: the original still fails, and in which class (skippable);
//   3. the strategies (reducer/strategies/), in registry order, restarting from the top
//      after any success, until none makes progress or the budget is spent;
//   4. the final result is checked again.
// Failures of the reducer itself are ReducerError, which says what to attach to a report.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "harness/util/errors.h"
#include "harness/program/program.h"
#include "harness/check/check.h"
#include "reducer/compile_client.h"
#include "reducer/error_profile.h"
#include "reducer/reduction_state.h"
#include "reducer/stage_ladder.h"

namespace aoti {

class ReducerError : public HarnessError {
 public:
  explicit ReducerError(const std::string& message)
      : HarnessError("aoti_reduce failed (a problem in the reducer, not in your model): " + message +
                     "\nPlease report it with the case directory (original.pt2, case.json) and this message.") {}
};

// NotReproducedError: the package fails, and a fresh compile of its whole program does not
// fail the same way, so there is nothing to reduce: a package brought in as shipped
// (aoti_prebuilt_package) was built by another torch or with other inductor configs.
class NotReproducedError : public HarnessError {
 public:
  explicit NotReproducedError(const std::string& message) : HarnessError(message) {}
};

struct ReduceSpec {
  std::string package;                 // the original archive: program, inputs, config patches
  std::string model;                   // "" the package's own (Pt2Archive::ResolveModelName)
  std::vector<at::Tensor> inputs;      // empty: the archive's sample inputs
  std::string failure_class;           // empty: whatever the sanity check finds
  std::string inductor_configs_json;   // empty: the archive's manifest
  CheckOptions check;                  // accuracy rule and runner
  std::string failure_message;         // what the test saw, when known (kept if the time runs out)
};

struct ReduceResult {
  std::string model;                   // the model reduced (ReduceSpec::model resolved)
  std::string package_name;            // the original by its Bazel label, else its file name
  Program original, minimal;
  std::vector<at::Tensor> minimal_inputs;
  std::string failure_class, message;  // the preserved failure, as the final check saw it
  std::string final_archive;           // compiled minimal program
  std::string inductor_configs_json;
  size_t nodes_before = 0, nodes_after = 0;
  int compiles = 0, cache_hits = 0, runs = 0, flaky = 0;
  int disk_cache_hits = 0;          // compiles served by the disk cache of earlier runs
  int jobs = 1;                     // compile servers in the pool
  int speculative_compiles = 0;     // compiled ahead on the pool, never needed (in compiles)
  std::vector<int> server_requests;  // requests each compile server of the pool answered
  std::string compile_cache_dir;    // "" when there was none
  std::string compile_cache_why;    // where it came from, or why there was none
  std::string remote_cache;         // the remote compile cache's URL, "" when none
  int remote_cache_hits = 0;        // compiles the remote cache gave (in disk_cache_hits)
  int remote_cache_stores = 0;      // entries uploaded to it
  std::string remote_cache_problem; // why it was left, if it was ("" otherwise)
  double seconds = 0, compile_seconds = 0;
  bool budget_exhausted = false;
  // hang_timeout_s: a hang reduced with candidates' runs stopped at this (shorter than the
  // test's own timeout; ReduceOptions::hang_timeout_s); the repro judges so too. 0: not used.
  double hang_timeout_s = 0;
  // sanity_checked: false when the time ran out before the sanity check saw the original
  // fail (the repro is then the original, as the test saw it fail).
  bool sanity_checked = true;
  // final_rechecked: the final result ran once more (not when out of time); with the result.
  bool final_rechecked = true;
  bool final_recheck_failed_again = false;
  // The weights repro.pt2 holds: "real" (the model's, only those the repro uses) or
  // "random" (ReduceOptions::random_weights, and the failure reproduced with them);
  // weights_note says why, for report.md.
  std::string weights = "real";
  std::string weights_note;
  std::vector<LogEntry> log;
  std::vector<std::pair<size_t, std::string>> checkpoints;
  std::vector<std::string> strategies;  // the order used
  // What the minimal program kept of the original's dynamic shapes (DynamicShapeNotes):
  // dynamic input dimensions with their ranges, and symbols specialised to their values.
  std::vector<std::string> dynamic_shapes;
  // The node named as the cause: by a localizing strategy, or the one node left ("" when
  // neither names one); culprit_path: its address in the original program, as reports say
  // it ("cond/true_graph_0/relu" for a node lifted out of a branch; its name otherwise).
  std::string culprit, culprit_path;
  // Accuracy failures: the failing output's error, element by element, in the original
  // and in the repro (report.html's plots).
  std::vector<ErrorProfile> error_profiles;
  // The stage of the compiler at fault and the workaround (ReduceOptions::stage_ladder).
  StageReport stage;
};

// What report.md and report.html say of the final re-check and of the time: "yes",
// "NO (flaky)" or "not re-run: out of time"; "no", "yes: best result so far" or, when the
// sanity check did not finish, "yes, during the sanity check: the repro is the original".
std::string RecheckText(const ReduceResult& r);
std::string BudgetText(const ReduceResult& r);
// ServerForCase: `base` (its Python and script) with what the case and the reduction
// decide: the test's op libraries and pass-through variables, the compile cache's
// precompiled headers, and the server's log in out_dir. The listener and aoti_reduce
// both start theirs from it, so a test's choices reach the compile server either way.
CompileServerOptions ServerForCase(CompileServerOptions base, const CheckOptions& check, const ReduceOptions& options,
                                   const std::string& out_dir);
// WithRemoteClient: the remote compile cache's client taken from the compile server's
// Python (it has grpcio) and tools/remote_compile_cache.py beside its script, unless set.
CompileCacheOptions WithRemoteClient(CompileCacheOptions options, const CompileServerOptions& server);
// ShownPackage: how report.md, report.html and workaround.md name the original: its Bazel
// label (package_name), else the file name of spec.package; never a sandbox path.
std::string ShownPackage(const ReduceResult& r, const ReduceSpec& spec);

ReduceResult Reduce(const ReduceSpec& spec, const ReduceOptions& options, CompileClient* client,
                    const std::string& work_dir, const std::function<void(const std::string&)>& progress);

}  // namespace aoti
