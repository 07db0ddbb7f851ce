#include "reducer/reduction_state.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <fstream>
#include <thread>

#include "reducer/graph_edit.h"

namespace aoti {

int DefaultJobs() {
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  long long available_kb = -1;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    long long value = 0;
    meminfo >> value;
    if (key == "MemAvailable:") {
      available_kb = value;
      break;
    }
    meminfo.ignore(1 << 10, '\n');
  }
  // Half the cores: a compile keeps about two busy (inductor's Python, then g++), and a
  // pool on two cores was slower than one server (bench: block_compile_error, 9 compiles
  // on one server in 93 s, 15 on two in 122 s).
  const int by_memory = available_kb < 0 ? cores : static_cast<int>(available_kb / (2LL * 1024 * 1024));
  return std::max(1, std::min({cores / 2, by_memory, 8}));
}

size_t ProgramSize(const Program& p) {
  return CountNodes(p.nodes) * 1000000 + p.output_specs.size() * 1000 + p.input_specs.size();
}

ReductionState::ReductionState(Program current, Oracle* oracle, const ReduceOptions* options,
                               std::function<void(const std::string&)> progress)
    : current_(std::move(current)),
      oracle_(oracle),
      options_(options),
      progress_(std::move(progress)),
      start_(std::chrono::steady_clock::now()) {}

bool ReductionState::OutOfTime() const {
  if (options_->deadline.Passed()) return true;
  if (options_->time_budget_s <= 0) return false;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() > options_->time_budget_s;
}

void ReductionState::Progress(const std::string& line) const {
  if (progress_) progress_(line);
}

double ReductionState::Elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ReductionState::Step(const std::string& strategy, const std::string& nodes, const std::string& what) const {
  if (progress_) progress_(StepLine(strategy, nodes, oracle_->compiles(), Elapsed(), what));
}

std::string StepLine(const std::string& strategy, const std::string& nodes, int compiles, double seconds,
                     const std::string& what) {
  char elapsed[32];
  std::snprintf(elapsed, sizeof(elapsed), "%.1f s", seconds);
  return strategy + " | " + nodes + " | " + std::to_string(compiles) + (compiles == 1 ? " compile" : " compiles") +
         " | " + elapsed + (what.empty() ? "" : " | " + what);
}

bool ReductionState::Fails(const Program& candidate) {
  if (candidate.nodes.empty()) return false;
  const Verdict v = oracle_->Test(candidate);
  Progress("  " + std::to_string(CountNodes(candidate.nodes)) + " nodes: " +
           (v.fails ? "fails the same way" : "not failing (" + v.not_failing_reason + ")") +
           (v.cached ? " [cached]" : ""));
  return v.fails;
}

bool ReductionState::Try(const Program& candidate, const std::string& strategy, const std::string& what,
                         const std::string& culprit) {
  if (candidate.nodes.empty() || ProgramSize(candidate) >= ProgramSize(current_)) return false;
  if (!Fails(candidate)) return false;
  const Verdict again = oracle_->Rerun(candidate);
  if (!again.fails) {
    ++flaky_;
    Progress("  flaky: failed once, then " + (again.failure_class.empty() ? std::string("passed") : again.failure_class) +
             "; not accepted");
    return false;
  }
  const size_t before = CountNodes(current_.nodes), after = CountNodes(candidate.nodes);
  log_.push_back({strategy, what, before, after, oracle_->compiles(), Elapsed(), culprit});
  Step(strategy, std::to_string(before) + " -> " + std::to_string(after) + " nodes", what);
  current_ = candidate;
  accepted_.emplace_back(after, again.archive);
  return true;
}

void ReductionState::Replace(const Program& program, const std::string& strategy, const std::string& what,
                             const std::string& archive) {
  const size_t before = CountNodes(current_.nodes), after = CountNodes(program.nodes);
  log_.push_back({strategy, what, before, after, oracle_->compiles(), Elapsed(), ""});
  Step(strategy, std::to_string(before) + " -> " + std::to_string(after) + " nodes", what);
  current_ = program;
  if (!archive.empty()) accepted_.emplace_back(after, archive);
}

int ReductionState::TryInOrder(const std::vector<Proposal>& proposals, const std::string& strategy) {
  const size_t n = proposals.size();
  std::vector<std::optional<Program>> built(n);
  std::vector<bool> tried_to_build(n, false);
  auto build = [&](size_t i) -> const Program* {
    if (!tried_to_build[i]) {
      tried_to_build[i] = true;
      try {
        built[i] = proposals[i].build();
      } catch (const EditRefused& e) {
        Progress("  " + proposals[i].what + ": cannot be built: " + e.what());
      }
    }
    return built[i] ? &*built[i] : nullptr;
  };
  const size_t jobs = static_cast<size_t>(std::max(1, oracle_->jobs()));
  size_t prefetched_to = 0;
  for (size_t i = 0; i < n && !OutOfTime(); ++i) {
    if (jobs > 1 && i >= prefetched_to) {
      // The next `jobs` candidates that would cost a compile, compiled together.
      std::vector<Program> batch;
      size_t j = i;
      for (; j < n && batch.size() < jobs; ++j) {
        const Program* c = build(j);
        if (c && !c->nodes.empty() && ProgramSize(*c) < ProgramSize(current_) && !oracle_->Known(*c)) batch.push_back(*c);
      }
      prefetched_to = j;
      oracle_->Prefetch(batch);
    }
    const Program* c = build(i);
    if (c && Try(*c, strategy, proposals[i].what)) return static_cast<int>(i);
  }
  return -1;
}

size_t ReductionState::Bisect(size_t lo, size_t hi, const std::function<Program(size_t)>& build) {
  auto try_build = [&](size_t k, bool quiet) -> std::optional<Program> {
    try {
      return build(k);
    } catch (const EditRefused& e) {
      if (!quiet) Progress("  candidate " + std::to_string(k) + " cannot be built: " + e.what());
      return std::nullopt;
    }
  };
  const size_t jobs = static_cast<size_t>(std::max(1, oracle_->jobs()));
  while (lo < hi && !OutOfTime()) {
    if (jobs > 1) {
      // The points this search may ask next, level by level (breadth first), until
      // `jobs` of them need a compile.
      std::vector<Program> batch;
      std::deque<std::pair<size_t, size_t>> intervals = {{lo, hi}};
      size_t looked_at = 0;
      while (!intervals.empty() && batch.size() < jobs && looked_at < 8 * jobs) {
        const auto [a, b] = intervals.front();
        intervals.pop_front();
        if (a >= b) continue;
        const size_t m = a + (b - a) / 2;
        ++looked_at;
        if (auto c = try_build(m, /*quiet=*/true); c && !c->nodes.empty() && !oracle_->Known(*c)) batch.push_back(std::move(*c));
        intervals.emplace_back(a, m);
        intervals.emplace_back(m + 1, b);
      }
      oracle_->Prefetch(batch);
    }
    const size_t mid = lo + (hi - lo) / 2;
    const auto candidate = try_build(mid, /*quiet=*/false);
    if (candidate && Fails(*candidate)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return hi;
}

}  // namespace aoti
