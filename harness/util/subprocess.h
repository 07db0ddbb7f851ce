// Subprocess: the one way the harness starts a process (the isolated runner, the compile
// server). argv and the environment are built before the fork; the child only calls
// setpgid, prctl, dup2 and execve, so nothing allocates between fork and exec in a
// multithreaded parent. The child leads its own process group, dies with its parent
// (PR_SET_PDEATHSIG), and the whole group is killed on timeout or when the object goes.
// PR_SET_PDEATHSIG fires when the *thread* that forked exits, so every fork happens on
// one spawner thread that lives as long as the process: a child started from a worker
// thread outlives that thread, and still dies with the process.
//
// ChildEnvironment builds the explicit environment every child gets: this process'
// environment minus PyTorch's own debug and repro variables (kStrippedTorchVariables),
// which would otherwise switch on torch's minifier, NaN asserts, debug printers or
// input checks inside our children, plus what the caller sets on purpose.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace aoti {

// The variables removed from every child's environment unless passed on purpose. An
// entry ending in '*' is a prefix. Documented in the README ("Child processes").
const std::vector<std::string>& StrippedTorchVariables();

// IsStrippedTorchVariable: name is in StrippedTorchVariables() (or matches a prefix).
bool IsStrippedTorchVariable(const std::string& name);

struct ChildEnvOptions {
  // Stripped variables to keep as inherited (names, or "*" for all of them).
  std::vector<std::string> pass_through;
  // Set last, over anything inherited (NAME, value).
  std::vector<std::pair<std::string, std::string>> set;
};

// ChildEnvironment: "NAME=value" entries for execve.
std::vector<std::string> ChildEnvironment(const ChildEnvOptions& options);

class Subprocess {
 public:
  struct Options {
    std::vector<std::string> argv;  // argv[0] is the executable's path
    std::vector<std::string> env;   // from ChildEnvironment
    int stdin_fd = -1;              // -1: /dev/null
    int stdout_fd = -1;             // -1: /dev/null
    int stderr_fd = -1;             // -1: /dev/null
    // More descriptors for the child: {descriptor here, its number in the child (>= 3)},
    // e.g. a dedicated answer pipe. Everything else is closed on exec.
    std::vector<std::pair<int, int>> extra_fds;
  };

  // Starts the process. Throws HarnessError naming the executable if it cannot.
  explicit Subprocess(const Options& options);
  ~Subprocess();  // kills the group and reaps the child if still running
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0 && !reaped_; }

  // Wait: true with the wait status when the child ended within timeout_s (anything
  // left in its group is killed); false after killing the group on timeout.
  bool Wait(double timeout_s, int* status);
  // Kill: SIGKILL to the group, then reap.
  void Kill();

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

// RunLogged: runs argv with `env`, its stdout and stderr into the file `log_path`, and
// waits up to timeout_s: true with the wait status when it ended, false after killing its
// group on timeout. Throws HarnessError when the log cannot be created or the process
// cannot be started.
bool RunLogged(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& log_path,
               double timeout_s, int* status);

// RunCaptured: RunLogged into a private temporary file (under $TMPDIR, else /tmp) that is
// read into *output (stdout and stderr, as the child wrote them) and removed: true with the
// wait status when it ended, false after killing its group on timeout (*output then holds
// what it printed before). Throws HarnessError when the file cannot be made or the process
// cannot be started.
bool RunCaptured(const std::vector<std::string>& argv, const std::vector<std::string>& env, double timeout_s,
                 int* status, std::string* output);

// FindExecutable: `name` as a path to run: as it is when it holds a '/', else the first
// executable file of that name on PATH (/usr/local/bin:/usr/bin:/bin when PATH is unset;
// execve searches nothing). Throws HarnessError naming it and PATH when there is none.
std::string FindExecutable(const std::string& name);

// CommandOutput: what a shell command prints on stdout, trailing newlines and spaces
// dropped ("" when it cannot run, or runs past timeout_s: its whole process group is then
// killed). For short probes (a compiler's --version, nvidia-smi), run in the environment
// every child gets (ChildEnvironment).
std::string CommandOutput(const std::string& shell_command, double timeout_s = 10);

// SignalName: "SIGSEGV", "SIGABRT", ..., or "signal N".
std::string SignalName(int sig);

}  // namespace aoti
