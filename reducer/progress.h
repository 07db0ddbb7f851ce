// ProgressLog: the reducer's progress as a person reads it while it runs, through glog.
// The reducer says two kinds of line: steps ("localize_kernel | 27 -> 1 nodes | 2 compiles
// | 31.4 s | ...", StepLine) and details (indented: a candidate's verdict, a strategy's own
// words). A step that shrinks the program is always logged; any other line is logged at
// INFO only while fewer than max_per_second lines were logged in the last second, and at
// VLOG(1) otherwise, so that cached verdicts arriving together never flood the test log.
// The next INFO line says how many were held back.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

namespace aoti {

class ProgressLog {
 public:
  using Clock = std::function<double()>;                    // seconds, monotonic
  using Sink = std::function<void(int level, const std::string& line)>;  // 0: INFO, 1: VLOG(1)

  // The defaults: steady_clock, and glog with `prefix` before each line.
  explicit ProgressLog(std::string prefix = "reduce: ", int max_per_second = 4, Clock clock = nullptr,
                       Sink sink = nullptr);

  void operator()(const std::string& line);
  // As a callback for Reduce (which copies it); the log must outlive the reduction.
  std::function<void(const std::string&)> Callback() {
    return [this](const std::string& line) { (*this)(line); };
  }
  int held_back() const { return held_back_total_; }

 private:
  std::string prefix_;
  int max_per_second_;
  Clock clock_;
  Sink sink_;
  std::mutex mu_;
  std::deque<double> logged_;  // when the INFO lines of the last second were logged
  int held_back_ = 0, held_back_total_ = 0;
};

// IsShrinkingStep: a step line that records an accepted candidate ("N -> M nodes").
bool IsShrinkingStep(const std::string& line);

}  // namespace aoti
