#include "reducer/progress.h"

#include <glog/logging.h>

#include "harness/util/logging.h"

namespace aoti {

bool IsShrinkingStep(const std::string& line) {
  return !line.empty() && line[0] != ' ' && line.find(" -> ") != std::string::npos &&
         line.find(" nodes | ") != std::string::npos;
}

ProgressLog::ProgressLog(std::string prefix, int max_per_second, Clock clock, Sink sink)
    : prefix_(std::move(prefix)), max_per_second_(max_per_second < 1 ? 1 : max_per_second) {
  clock_ = clock ? std::move(clock) : Clock([] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  });
  sink_ = sink ? std::move(sink) : Sink([this](int level, const std::string& line) {
    if (level == 0) {
      LOG(INFO) << prefix_ << line;
    } else {
      AOTI_VLOG(1) << prefix_ << line;
    }
  });
}

void ProgressLog::operator()(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  const double now = clock_();
  while (!logged_.empty() && now - logged_.front() >= 1.0) logged_.pop_front();
  if (!IsShrinkingStep(line) && static_cast<int>(logged_.size()) >= max_per_second_) {
    ++held_back_;
    ++held_back_total_;
    sink_(1, line);
    return;
  }
  logged_.push_back(now);
  if (held_back_) {
    sink_(0, line + "   (" + std::to_string(held_back_) + (held_back_ == 1 ? " line" : " lines") +
                 " held back, shown with --v=1)");
    held_back_ = 0;
  } else {
    sink_(0, line);
  }
}

}  // namespace aoti
