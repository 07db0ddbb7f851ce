// Logging: every harness binary's diagnostics and progress go through glog, to stderr,
// with one prefix: "[aoti] " (and "warning: " / "error: " after it for those levels).
// AOTI_VLOG(1) adds detail under --v=1. The core libraries log detail through AOTI_VLOG, not
// glog's VLOG: VLOG reads glog's gflags flag FLAGS_v, and the core reads no flags (its
// core_layer_test checks the symbols); the edges pass --v down through InitLogging.
#pragma once

#include <glog/logging.h>

namespace aoti {

// InitLogging: call once from main(), after flags are parsed, with the verbosity the
// edge read (glog's --v there).
void InitLogging(const char* argv0, int verbosity = 0);

// LogVerbosity: the verbosity InitLogging was given (0 before it is called).
int LogVerbosity();

}  // namespace aoti

#define AOTI_VLOG(level) LOG_IF(INFO, ::aoti::LogVerbosity() >= (level))
