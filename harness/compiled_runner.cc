#include "harness/compiled_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <nlohmann/json.hpp>

#include "harness/compiled_model.h"
#include "harness/errors.h"
#include "harness/pt2_archive.h"
#include "harness/stderr_capture.h"
#include "harness/tensor_bundle.h"
#include "harness/temp_dir.h"

namespace aoti {
namespace {

bool IsExecutable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_IXUSR);
}

std::string SignalName(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGBUS: return "SIGBUS";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    default: return "signal " + std::to_string(sig);
  }
}

// ChildProcess: fork + exec with stdout and stderr to a file; kills its process group if
// it is still running when destroyed.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path,
               const std::vector<std::pair<std::string, std::string>>& env) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log_fd < 0) throw HarnessError("cannot create " + log_path + ": " + std::strerror(errno));
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) {
      ::close(log_fd);
      throw HarnessError(std::string("fork failed: ") + std::strerror(errno));
    }
    if (pid_ == 0) {
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(125);  // the parent is already gone
      ::dup2(log_fd, STDOUT_FILENO);
      ::dup2(log_fd, STDERR_FILENO);
      ::close(log_fd);
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      ::execv(args[0], args.data());
      const std::string msg = std::string("exec ") + args[0] + " failed: " + std::strerror(errno) + "\n";
      ssize_t ignored = ::write(STDERR_FILENO, msg.data(), msg.size());
      (void)ignored;
      ::_exit(127);
    }
    ::setpgid(pid_, pid_);
    ::close(log_fd);
  }

  ~ChildProcess() {
    if (pid_ > 0 && !reaped_) {
      ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      int status;
      ::waitpid(pid_, &status, 0);
    }
  }

  // Wait: true with the wait status when the child ended within timeout_s; false after
  // killing it on timeout.
  bool Wait(double timeout_s, int* status) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    auto pause = std::chrono::milliseconds(2);
    while (true) {
      const pid_t r = ::waitpid(pid_, status, WNOHANG);
      if (r == pid_) {
        reaped_ = true;
        ::kill(-pid_, SIGKILL);  // anything the child left behind in its group
        return true;
      }
      if (r < 0 && errno != EINTR) throw HarnessError(std::string("waitpid failed: ") + std::strerror(errno));
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(-pid_, SIGKILL);
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, status, 0);
        reaped_ = true;
        return false;
      }
      std::this_thread::sleep_for(pause);
      if (pause < std::chrono::milliseconds(50)) pause *= 2;
    }
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

CompiledOutcome RunInProcess(const std::string& package, const std::string& model,
                             const std::vector<at::Tensor>& inputs) {
  CompiledOutcome o;
  try {
    auto archive = Pt2Archive::Open(package);
    auto compiled = CompiledModel::Load(*archive, model);
    o.outputs = compiled->Run(inputs);
    o.kind = OutcomeKind::kOk;
  } catch (const AotiCompileError& e) {
    o.kind = OutcomeKind::kCompileError;
    o.message = e.what();
  } catch (const AotiLoadError& e) {
    o.kind = OutcomeKind::kLoadError;
    o.message = e.what();
  } catch (const AotiRunError& e) {
    o.kind = OutcomeKind::kRuntimeError;
    o.message = e.what();
    o.stderr_text = e.stderr_text();
  } catch (const HarnessError& e) {
    o.kind = OutcomeKind::kHarnessError;
    o.message = e.what();
  }
  return o;
}

}  // namespace

std::string OutcomeKindName(OutcomeKind kind) {
  switch (kind) {
    case OutcomeKind::kOk: return "ok";
    case OutcomeKind::kCompileError: return "compile error";
    case OutcomeKind::kLoadError: return "load error";
    case OutcomeKind::kRuntimeError: return "runtime error";
    case OutcomeKind::kSignal: return "signal";
    case OutcomeKind::kTimeout: return "timeout";
    case OutcomeKind::kHarnessError: return "harness error";
  }
  return "unknown";
}

std::string CompiledOutcome::Summary() const {
  if (kind == OutcomeKind::kSignal) return "signal " + SignalName(signal) + " (" + strsignal(signal) + ")";
  if (kind == OutcomeKind::kOk) return "ok";
  return OutcomeKindName(kind) + ": " + message;
}

std::string FindRunner(const RunnerOptions& options) {
  if (!options.runner_path.empty()) {
    if (!IsExecutable(options.runner_path)) {
      throw HarnessError("--aoti_runner=" + options.runner_path + ": not an executable file");
    }
    return options.runner_path;
  }
  std::vector<std::string> tried;
  for (const char* var : {"TEST_SRCDIR", "RUNFILES_DIR"}) {
    const char* root = std::getenv(var);
    if (!root || !*root) continue;
    const std::string candidate = std::string(root) + "/aoti_harness/harness/aoti_runner";
    if (IsExecutable(candidate)) return candidate;
    tried.push_back(candidate);
  }
  std::string where;
  for (const auto& t : tried) where += " " + t;
  throw HarnessError("cannot find the aoti_runner binary (tried:" + (where.empty() ? std::string(" no runfiles") : where) +
                     "); add //harness:aoti_runner to the test's data and pass --aoti_runner, or use aoti_model_test");
}

CompiledOutcome RunCompiled(const std::string& package, const std::string& model,
                            const std::vector<at::Tensor>& inputs, const RunnerOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  auto finish = [&](CompiledOutcome o) {
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return o;
  };
  if (!options.isolate) {
    const char* old = std::getenv("AOTI_RUNTIME_CHECK_INPUTS");
    const std::string saved = old ? old : "";
    if (options.runtime_check_inputs) ::setenv("AOTI_RUNTIME_CHECK_INPUTS", "1", 1);
    CompiledOutcome o = RunInProcess(package, model, inputs);
    if (options.runtime_check_inputs) {
      if (old) ::setenv("AOTI_RUNTIME_CHECK_INPUTS", saved.c_str(), 1);
      else ::unsetenv("AOTI_RUNTIME_CHECK_INPUTS");
    }
    return finish(std::move(o));
  }
  CompiledOutcome o;
  try {
    const std::string runner = FindRunner(options);
    TempDir work("aoti_run");
    const std::string in_dir = work.path() + "/inputs", out_dir = work.path() + "/outputs";
    MakeDirs(in_dir);
    MakeDirs(out_dir);
    WriteTensorBundle(in_dir, inputs);
    std::vector<std::string> argv = {runner, "--package", package, "--model", model,
                                     "--inputs", in_dir, "--outputs", out_dir};
    for (const auto& lib : options.op_libraries) {
      argv.push_back("--op_library");
      argv.push_back(lib);
    }
    std::vector<std::pair<std::string, std::string>> env = options.env;
    if (options.runtime_check_inputs) env.emplace_back("AOTI_RUNTIME_CHECK_INPUTS", "1");
    const std::string log = work.path() + "/child.log";
    int status = 0;
    bool ended;
    {
      ChildProcess child(argv, log, env);
      ended = child.Wait(options.timeout_s, &status);
    }
    o.stderr_text = ReadTextFile(log);
    if (!ended) {
      o.kind = OutcomeKind::kTimeout;
      o.message = "the compiled model ran past the timeout of " + std::to_string(options.timeout_s) +
                  " s and was killed (--aoti_timeout_s)";
      return finish(o);
    }
    if (WIFSIGNALED(status)) {
      o.kind = OutcomeKind::kSignal;
      o.signal = WTERMSIG(status);
      o.message = "the compiled model's process died of " + SignalName(o.signal) + " (" + strsignal(o.signal) + ")" +
                  (o.stderr_text.empty() ? "" : "; its last output:\n" + LastLines(o.stderr_text, 15));
      return finish(o);
    }
    nlohmann::json result;
    try {
      result = nlohmann::json::parse(ReadTextFile(out_dir + "/result.json"));
    } catch (const std::exception& e) {
      o.kind = OutcomeKind::kHarnessError;
      o.message = "aoti_runner exited with status " + std::to_string(WEXITSTATUS(status)) +
                  " without a result:\n" + LastLines(o.stderr_text, 15);
      return finish(o);
    }
    const std::string s = result.value("status", "");
    o.message = result.value("message", "");
    if (s == "ok") {
      o.kind = OutcomeKind::kOk;
      o.outputs = ReadTensorBundle(out_dir);
    } else if (s == "compile_error") {
      o.kind = OutcomeKind::kCompileError;
    } else if (s == "load_error") {
      o.kind = OutcomeKind::kLoadError;
    } else if (s == "runtime_error") {
      o.kind = OutcomeKind::kRuntimeError;
    } else {
      o.kind = OutcomeKind::kHarnessError;
    }
  } catch (const HarnessError& e) {
    o.kind = OutcomeKind::kHarnessError;
    o.message = e.what();
  }
  return finish(o);
}

}  // namespace aoti
