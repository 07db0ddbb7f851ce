// Debian's glog 0.6 is built with custom prefixes but its header declares them only
// under this macro; defined here, before any glog header, for this file alone.
#define GLOG_CUSTOM_PREFIX_SUPPORT 1
#include <glog/logging.h>

#include "harness/util/logging.h"

#include <cstring>
#include <ostream>

namespace aoti {
namespace {

int verbosity_level = 0;

void Prefix(std::ostream& s, const google::LogMessageInfo& info, void*) {
  s << "[aoti]";
  if (std::strcmp(info.severity, "WARNING") == 0) s << " warning:";
  else if (std::strcmp(info.severity, "ERROR") == 0) s << " error:";
  else if (std::strcmp(info.severity, "FATAL") == 0) s << " fatal:";
}

}  // namespace

void InitLogging(const char* argv0, int verbosity) {
  verbosity_level = verbosity;
  if (!google::IsGoogleLoggingInitialized()) google::InitGoogleLogging(argv0, &Prefix, nullptr);
  google::LogToStderr();  // no log files left behind in /tmp; glog's API, not its flag
}

int LogVerbosity() { return verbosity_level; }

}  // namespace aoti
