// Deadline: the one point in time by which a process must be done with its children. Every
// child run, compile and re-run takes its timeout from what is left of it (Cap), so that no
// step can outlast the test: under Bazel it is TEST_TIMEOUT after the test started, less a
// reserve for writing the artifacts. A default Deadline is none (no cap).
#pragma once

#include <chrono>
#include <string>

namespace aoti {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  Deadline() = default;
  Deadline(Clock::time_point when, std::string what) : set_(true), when_(when), what_(std::move(what)) {}

  // ForTestTimeout: from Bazel's TEST_TIMEOUT (seconds, as the variable holds it) counted
  // from `start`, less ArtifactReserveSeconds; none when test_timeout is null, empty or
  // not a positive number.
  static Deadline ForTestTimeout(const char* test_timeout, Clock::time_point start);
  // ParseTestTimeout: TEST_TIMEOUT's seconds; 0 when null, empty or not a positive number
  // (the one reading of the variable: the deadline, the reducer's budget, the size advice).
  static double ParseTestTimeout(const char* test_timeout);
  // ForThisTest: ForTestTimeout with $TEST_TIMEOUT and the time this process started.
  static Deadline ForThisTest();
  // The reserve kept after the deadline for writing the case and the repro (and for Bazel
  // to collect them): max(30 s, a tenth of the timeout).
  static double ArtifactReserveSeconds(double test_timeout_s);

  // Within: this deadline, or `timeout_s` from now where that comes first (its `what` then
  // says so): one run's allowance under the process' deadline.
  Deadline Within(double timeout_s, const std::string& what) const;

  bool set() const { return set_; }
  // SecondsLeft: until the deadline (negative once passed); a very large number when none.
  double SecondsLeft() const;
  bool Passed() const { return set_ && SecondsLeft() <= 0; }
  // Cap: timeout_s, or what is left when that is less (0 when the deadline has passed).
  double Cap(double timeout_s) const;
  // Capped: whether Cap(timeout_s) is less than timeout_s now.
  bool Caps(double timeout_s) const { return set_ && Cap(timeout_s) < timeout_s; }
  // What sets it, for messages: "the test's TEST_TIMEOUT of 300 s, less 30 s for the artifacts".
  const std::string& what() const { return what_; }

 private:
  bool set_ = false;
  Clock::time_point when_{};
  std::string what_;
};

// ProcessStart: the time this process' static initialisation ran (close to Bazel's start
// of the test; the reserve covers the difference).
Deadline::Clock::time_point ProcessStart();

// NextTestSize: Bazel's size whose default timeout is above test_timeout_s ("small" 60 s,
// "medium" 300 s, "large" 900 s, "enormous" 3600 s), with its timeout; "" past enormous.
std::pair<std::string, int> NextTestSize(double test_timeout_s);

}  // namespace aoti
