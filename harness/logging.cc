#include "harness/logging.h"

#include <cstring>
#include <ostream>

#include <glog/logging.h>

namespace aoti {
namespace {

void Prefix(std::ostream& s, const google::LogMessageInfo& info, void*) {
  s << "[aoti]";
  if (std::strcmp(info.severity, "WARNING") == 0) s << " warning:";
  else if (std::strcmp(info.severity, "ERROR") == 0) s << " error:";
  else if (std::strcmp(info.severity, "FATAL") == 0) s << " fatal:";
}

}  // namespace

void InitLogging(const char* argv0) {
  FLAGS_logtostderr = true;  // no log files left behind in /tmp
  if (!google::IsGoogleLoggingInitialized()) google::InitGoogleLogging(argv0, &Prefix, nullptr);
}

}  // namespace aoti
