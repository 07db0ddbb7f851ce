// Logging: every harness binary's diagnostics and progress go through glog, to stderr,
// with one prefix: "[aoti] " (and "warning: " / "error: " after it for those levels).
// VLOG(1) adds detail under --v=1.
#pragma once

namespace aoti {

// InitLogging: call once from main(), after flags are parsed.
void InitLogging(const char* argv0);

}  // namespace aoti
