#include "reducer/reduction_state.h"

namespace aoti {

size_t ProgramSize(const Program& p) {
  return p.nodes.size() * 1000000 + p.output_specs.size() * 1000 + p.input_specs.size();
}

ReductionState::ReductionState(Program current, Oracle* oracle, const ReduceOptions* options,
                               std::function<void(const std::string&)> progress)
    : current_(std::move(current)),
      oracle_(oracle),
      options_(options),
      progress_(std::move(progress)),
      start_(std::chrono::steady_clock::now()) {}

bool ReductionState::OutOfTime() const {
  if (options_->time_budget_s <= 0) return false;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() > options_->time_budget_s;
}

void ReductionState::Progress(const std::string& line) const {
  if (progress_) progress_(line);
}

bool ReductionState::Fails(const Program& candidate) {
  if (candidate.nodes.empty()) return false;
  const Verdict v = oracle_->Test(candidate);
  Progress("  " + std::to_string(candidate.nodes.size()) + " nodes: " +
           (v.fails ? "fails the same way" : "not failing (" + v.not_failing_reason + ")") +
           (v.cached ? " [cached]" : ""));
  return v.fails;
}

bool ReductionState::Try(const Program& candidate, const std::string& strategy, const std::string& what) {
  if (candidate.nodes.empty() || ProgramSize(candidate) >= ProgramSize(current_)) return false;
  if (!Fails(candidate)) return false;
  const Verdict again = oracle_->Rerun(candidate);
  if (!again.fails) {
    ++flaky_;
    Progress("  flaky: failed once, then " + (again.failure_class.empty() ? std::string("passed") : again.failure_class) +
             "; not accepted");
    return false;
  }
  log_.push_back({strategy, what, current_.nodes.size(), candidate.nodes.size()});
  Progress(strategy + ": " + what + ": " + std::to_string(current_.nodes.size()) + " -> " +
           std::to_string(candidate.nodes.size()) + " nodes");
  current_ = candidate;
  accepted_.emplace_back(candidate.nodes.size(), again.archive);
  return true;
}

}  // namespace aoti
