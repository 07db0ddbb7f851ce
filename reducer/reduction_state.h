// ReductionState: the search engine the strategies propose to. It holds the current
// (smallest failing) program, the oracle, the budget, the error handling (a candidate that
// cannot be built is skipped and logged), the log, and the parallelism: TryInOrder and
// Bisect compile the candidates they will need next together on the oracle's pool, then
// judge them one at a time in the order one server would, so the result is the same
// whatever the pool size (llvm-reduce's shape: passes say what to try, the engine tries).
// Try() is the one way the current program changes.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/util/deadline.h"
#include "harness/program/program.h"
#include "reducer/compile_cache.h"
#include "reducer/oracle.h"

namespace aoti {

struct ReduceOptions {
  std::string check_str;          // the failure message must contain it
  int max_granularity = 0;        // delta debugging's first window (a power of two); 0: largest that fits
  bool skip_sanity = false;       // do not check that the original still fails
  double time_budget_s = 0;       // 0: none; when spent, keep the best so far and say so
  // deadline: the process' (the test's, under Bazel). The reduction is out of time when it
  // has passed, as when the budget is spent; no compile or run outlasts it.
  Deadline deadline;
  // hang_timeout_s: reducing a hang, a candidate's compiled run that goes on this long
  // counts as hanging (capped at the case's own timeout); 0: the case's timeout.
  double hang_timeout_s = 20;
  std::vector<std::string> strategies;  // empty: all, in registry order
  int jobs = 1;                    // compile servers at once; 0: what fits this machine (DefaultJobs)
  bool skip_export_errors = true;  // a candidate torch.export cannot load counts as not failing
  bool offload_to_disk = false;    // keep the eager values on disk, not in memory
  CompileCacheOptions compile_cache;  // compiled candidates kept across runs ("" dir: none)
  // random_weights: once reduced, the repro is compiled once more with random weights of the
  // same shape, dtype, mean and std; repro.pt2 keeps them where the failure reproduces.
  bool random_weights = false;
  // stage_ladder: once reduced, find the compiler's stage at fault and a workaround verified
  // on the original (reducer/stage_ladder.h), within these compile budgets.
  bool stage_ladder = false;
  int ladder_budget = 4, workaround_budget = 2;
  // lift_control_flow: reduce a program with control flow first with it lifted as it ran
  // (reducer/lift_control_flow.h), kept when that fails the same way; false keeps the
  // control flow in the repro whatever (reduce_body then cuts its body).
  bool lift_control_flow = true;
};

// DefaultJobs: compile servers this machine fits: one per two cores, two GiB of available
// memory each (a server with torch plus g++), at most 8, at least 1.
int DefaultJobs();

// Proposal: one candidate a strategy would like tried, built only when the engine gets
// to it. build may throw EditRefused (the edit is not possible on this program).
struct Proposal {
  std::string what;
  std::function<Program()> build;
};

struct LogEntry {
  std::string strategy;
  std::string what;
  size_t nodes_before = 0, nodes_after = 0;
  int compiles = 0;      // compiles made so far in the reduction, this step's included
  double seconds = 0;    // since the reduction started
  std::string culprit;   // the node a localizing strategy named as the cause ("" when none)
};

class ReductionState {
 public:
  ReductionState(Program current, Oracle* oracle, const ReduceOptions* options,
                 std::function<void(const std::string&)> progress);

  const Program& current() const { return current_; }
  Oracle& oracle() { return *oracle_; }
  const ReduceOptions& options() const { return *options_; }

  // Try tests a candidate; when it fails the same way, is smaller, and fails again on a
  // second run (not flaky), it becomes the current program. Returns whether it did.
  // `culprit`: the node the strategy names as the cause (a localizing strategy's proposal).
  bool Try(const Program& candidate, const std::string& strategy, const std::string& what,
           const std::string& culprit = "");
  // Replace: `program` becomes the current one, whatever its size (the control flow lifted,
  // a form the reduction goes on from once it was seen to fail the same way), logged as a
  // step; `archive`, when given, is its compiled form (a checkpoint).
  void Replace(const Program& program, const std::string& strategy, const std::string& what,
               const std::string& archive = "");
  // SetCurrent: a tentative current program, not logged (the sanity check's look at a form
  // of the original before it is known to fail the same way).
  void SetCurrent(const Program& program) { current_ = program; }
  // Fails: the oracle's verdict without accepting (for searches such as bisection).
  bool Fails(const Program& candidate);

  // TryInOrder: the proposals tried in order; the first one accepted (Try) ends the
  // search. Returns its index, or -1. Candidates that cannot be built are skipped.
  int TryInOrder(const std::vector<Proposal>& proposals, const std::string& strategy);
  // Bisect: the smallest k in [lo, hi] for which build(k) fails, by binary search, given
  // that build(hi) fails (it is not tested). A k that cannot be built counts as not
  // failing. With a pool, the next levels of the search are compiled together.
  size_t Bisect(size_t lo, size_t hi, const std::function<Program(size_t)>& build);

  bool OutOfTime() const;
  // FirstTime: true the first time a tag is asked about in this reduction (a strategy
  // that spends a compile on a diagnosis does it once).
  bool FirstTime(const std::string& tag) { return tags_.insert(tag).second; }
  // Progress: a detail line (indented, as the strategies' own words). Step: one line for a
  // step of the reduction (a strategy begun, a candidate accepted): what, the nodes left,
  // the compiles so far and the time since the start, in one shape
  // ("localize_kernel | 27 -> 1 nodes | 2 compiles | 31.4 s | node 'relu' of kernel ...").
  void Progress(const std::string& line) const;
  void Step(const std::string& strategy, const std::string& nodes, const std::string& what) const;
  double Elapsed() const;

  const std::vector<LogEntry>& log() const { return log_; }
  // Accepted: the compiled archives of accepted candidates, by node count (checkpoints).
  const std::vector<std::pair<size_t, std::string>>& accepted() const { return accepted_; }
  int flaky() const { return flaky_; }

 private:
  Program current_;
  Oracle* oracle_;
  const ReduceOptions* options_;
  std::function<void(const std::string&)> progress_;
  std::chrono::steady_clock::time_point start_;
  std::vector<LogEntry> log_;
  std::vector<std::pair<size_t, std::string>> accepted_;
  int flaky_ = 0;
  std::set<std::string> tags_;
};

// StepLine: the shape of a step line, "STRATEGY | NODES | N compiles | S s | WHAT".
std::string StepLine(const std::string& strategy, const std::string& nodes, int compiles, double seconds,
                     const std::string& what);

// Size: how a candidate compares: nodes (those inside subgraphs too) first, then outputs,
// then inputs.
size_t ProgramSize(const Program& p);

}  // namespace aoti
