#include "harness/util/deadline.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace aoti {
namespace {

const Deadline::Clock::time_point kProcessStart = Deadline::Clock::now();

std::string Seconds(double s) { return std::to_string(static_cast<long long>(s + 0.5)) + " s"; }

}  // namespace

Deadline::Clock::time_point ProcessStart() { return kProcessStart; }

double Deadline::ArtifactReserveSeconds(double test_timeout_s) { return std::max(30.0, 0.1 * test_timeout_s); }

double Deadline::ParseTestTimeout(const char* test_timeout) {
  if (!test_timeout || !*test_timeout) return 0;
  char* end = nullptr;
  const double timeout = std::strtod(test_timeout, &end);
  return end == test_timeout || *end != '\0' || !(timeout > 0) ? 0 : timeout;
}

Deadline Deadline::ForTestTimeout(const char* test_timeout, Clock::time_point start) {
  const double timeout = ParseTestTimeout(test_timeout);
  if (!(timeout > 0)) return {};
  const double reserve = ArtifactReserveSeconds(timeout);
  const auto when = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout - reserve));
  return Deadline(when, "the test's TEST_TIMEOUT of " + Seconds(timeout) + ", less " + Seconds(reserve) +
                            " kept for writing the case and the repro");
}

Deadline Deadline::ForThisTest() { return ForTestTimeout(std::getenv("TEST_TIMEOUT"), kProcessStart); }

double Deadline::SecondsLeft() const {
  if (!set_) return std::numeric_limits<double>::max();
  return std::chrono::duration<double>(when_ - Clock::now()).count();
}

Deadline Deadline::Within(double timeout_s, const std::string& what) const {
  if (!(timeout_s > 0)) return *this;
  const auto when = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  if (set_ && when_ <= when) return *this;
  return Deadline(when, what);
}

double Deadline::Cap(double timeout_s) const {
  if (!set_) return timeout_s;
  return std::max(0.0, std::min(timeout_s, SecondsLeft()));
}

std::pair<std::string, int> NextTestSize(double test_timeout_s) {
  for (const auto& [size, seconds] : {std::pair<const char*, int>{"small", 60}, {"medium", 300}, {"large", 900},
                                      {"enormous", 3600}}) {
    if (seconds > test_timeout_s) return {size, seconds};
  }
  return {"", 0};
}

}  // namespace aoti
