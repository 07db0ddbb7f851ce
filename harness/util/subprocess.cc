#include "harness/util/subprocess.h"

#include <sys/stat.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>

#include "harness/util/errors.h"

extern char** environ;

namespace aoti {

const std::vector<std::string>& StrippedTorchVariables() {
  static const auto* names = new std::vector<std::string>{
      // torch's own AOTI minifier: runs the model inside aoti_compile_and_package.
      "DUMP_AOTI_MINIFIER", "AOTINDUCTOR_REPRO_LEVEL",
      // dynamo's repro and minifier hooks.
      "TORCHDYNAMO_REPRO_*",
      // compile-time debug output and instrumentation of the generated code.
      "TORCH_COMPILE_DEBUG", "TORCH_COMPILE_DEBUG_DIR", "TORCH_COMPILE_DEBUG_SAVE_REAL",
      "TORCH_COMPILE_CPROFILE", "TORCH_LOGS", "TORCH_TRACE", "TORCHINDUCTOR_NAN_ASSERTS",
      "TORCHINDUCTOR_RUNTIME_TRITON_NAN_ASSERTS", "TORCHINDUCTOR_SAVE_ARGS", "TORCHINDUCTOR_PROFILE",
      "TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE", "AOT_INDUCTOR_DEBUG_COMPILE", "AOT_INDUCTOR_DEBUG_SYMBOLS",
      "AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER", "AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT",
      // run-time checks and CUDA debugging settings: the harness sets them itself when
      // asked (--aoti_runtime_check_inputs, --aoti_runner_env).
      "AOTI_RUNTIME_CHECK_INPUTS", "CUDA_LAUNCH_BLOCKING", "PYTORCH_NO_CUDA_MEMORY_CACHING"};
  return *names;
}

bool IsStrippedTorchVariable(const std::string& name) {
  for (const auto& entry : StrippedTorchVariables()) {
    if (!entry.empty() && entry.back() == '*') {
      if (name.compare(0, entry.size() - 1, entry, 0, entry.size() - 1) == 0) return true;
    } else if (name == entry) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> ChildEnvironment(const ChildEnvOptions& options) {
  auto passed = [&](const std::string& name) {
    for (const auto& p : options.pass_through) {
      if (p == "*" || p == name) return true;
    }
    return false;
  };
  auto overridden = [&](const std::string& name) {
    for (const auto& [k, v] : options.set) {
      if (k == name) return true;
    }
    return false;
  };
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    if (overridden(name)) continue;
    if (IsStrippedTorchVariable(name) && !passed(name)) continue;
    env.push_back(entry);
  }
  for (const auto& [k, v] : options.set) env.push_back(k + "=" + v);
  return env;
}

std::string FindExecutable(const std::string& name) {
  if (name.empty()) throw HarnessError("an empty program name to run");
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  const std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  throw HarnessError("'" + name + "' is not an executable file in any directory of PATH (" + dirs + ")");
}

bool RunCaptured(const std::vector<std::string>& argv, const std::vector<std::string>& env, double timeout_s,
                 int* status, std::string* output) {
  const char* tmp = std::getenv("TMPDIR");
  std::string log = std::string(tmp && *tmp ? tmp : "/tmp") + "/aoti_output_XXXXXX";
  const int fd = ::mkstemp(log.data());
  if (fd < 0) {
    throw HarnessError("cannot create a file for " + argv.at(0) + "'s output (" + log + "): " + std::strerror(errno));
  }
  ::close(fd);
  bool ended = false;
  try {
    ended = RunLogged(argv, env, log, timeout_s, status);
  } catch (...) {
    ::unlink(log.c_str());
    throw;
  }
  std::ifstream in(log, std::ios::binary);
  output->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  ::unlink(log.c_str());
  return ended;
}

std::string CommandOutput(const std::string& shell_command, double timeout_s) {
  std::string out;
  int status = 0;
  try {
    // A hung probe (nvidia-smi on a wedged driver) is killed with its whole group.
    if (!RunCaptured({"/bin/sh", "-c", "exec 2>/dev/null; " + shell_command}, ChildEnvironment({}), timeout_s, &status,
                     &out)) {
      out.clear();
    }
  } catch (const HarnessError&) {
    out.clear();
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ')) out.pop_back();
  return out;
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

namespace {

// Spawner: the thread every fork happens on. It is never joined or destroyed, so a
// child's PR_SET_PDEATHSIG fires only when the whole process ends.
class Spawner {
 public:
  static Spawner& Get() {
    static Spawner* spawner = new Spawner();
    return *spawner;
  }

  // Run: calls fork_fn on the spawner thread and returns its result (and errno).
  std::pair<pid_t, int> Run(const std::function<pid_t()>& fork_fn) {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [&] { return job_ == nullptr; });
    job_ = &fork_fn;
    done_ = false;
    work_.notify_one();
    finished_.wait(lock, [&] { return done_; });
    const auto result = std::make_pair(result_, errno_);
    job_ = nullptr;
    idle_.notify_one();
    return result;
  }

 private:
  Spawner() { std::thread([this] { Loop(); }).detach(); }

  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      work_.wait(lock, [&] { return job_ != nullptr && !done_; });
      result_ = (*job_)();
      errno_ = errno;
      done_ = true;
      finished_.notify_one();
    }
  }

  std::mutex mu_;
  std::condition_variable work_, finished_, idle_;
  const std::function<pid_t()>* job_ = nullptr;
  bool done_ = false;
  pid_t result_ = -1;
  int errno_ = 0;
};

}  // namespace

Subprocess::Subprocess(const Options& options) {
  if (options.argv.empty()) throw HarnessError("Subprocess: no program given");
  // Everything the child needs is built here, before fork.
  std::vector<char*> argv;
  for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : options.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) throw HarnessError(std::string("cannot open /dev/null: ") + std::strerror(errno));
  const int fds[3] = {options.stdin_fd >= 0 ? options.stdin_fd : null_fd,
                      options.stdout_fd >= 0 ? options.stdout_fd : null_fd,
                      options.stderr_fd >= 0 ? options.stderr_fd : null_fd};
  // Extra descriptors, first moved out of the way (numbers >= 100, close-on-exec), so no
  // dup2 in the child overwrites a source another one still needs.
  std::vector<std::pair<int, int>> extra;
  auto close_extra = [&] {
    for (const auto& [high, target] : extra) ::close(high);
  };
  for (const auto& [fd, target] : options.extra_fds) {
    if (target < 3) {
      close_extra();
      ::close(null_fd);
      throw HarnessError("Subprocess: extra descriptor number " + std::to_string(target) +
                         " for " + options.argv[0] + "; expected 3 or more (0-2 are stdin, stdout, stderr)");
    }
    const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, 100);
    if (high < 0) {
      const int err = errno;
      close_extra();
      ::close(null_fd);
      throw HarnessError("cannot start " + options.argv[0] + ": descriptor " + std::to_string(fd) +
                         " cannot be passed: " + std::strerror(err));
    }
    extra.emplace_back(high, target);
  }
  const std::string exec_failed = "exec " + options.argv[0] + " failed\n";
  const pid_t parent = ::getpid();
  const std::function<pid_t()> fork_and_exec = [&]() -> pid_t {
    const pid_t pid = ::fork();
    if (pid != 0) return pid;
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(125);  // the parent is already gone
    // dup2 clears FD_CLOEXEC on the target; every other descriptor is CLOEXEC or closed.
    for (int target = 0; target < 3; ++target) {
      if (fds[target] == target) {
        ::fcntl(target, F_SETFD, 0);
      } else {
        ::dup2(fds[target], target);
      }
    }
    for (const auto& [high, target] : extra) ::dup2(high, target);
    ::execve(argv[0], argv.data(), envp.data());
    ssize_t ignored = ::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    (void)ignored;
    ::_exit(127);
  };
  const auto [pid, fork_errno] = Spawner::Get().Run(fork_and_exec);
  pid_ = pid;
  close_extra();
  ::close(null_fd);
  if (pid_ < 0) {
    throw HarnessError("cannot start " + options.argv[0] + ": fork failed: " + std::strerror(fork_errno));
  }
  ::setpgid(pid_, pid_);
}

Subprocess::~Subprocess() { Kill(); }

void Subprocess::Kill() {
  if (pid_ <= 0 || reaped_) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  int status;
  // A process stuck in the kernel may take a moment to die; do not wait forever.
  for (int i = 0; i < 1000; ++i) {
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  reaped_ = true;
}

bool Subprocess::Wait(double timeout_s, int* status) {
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
      Kill();
      return false;
    }
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::milliseconds(50)) pause *= 2;
  }
}

bool RunLogged(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& log_path,
               double timeout_s, int* status) {
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw HarnessError("cannot create " + log_path + ": " + std::strerror(errno));
  std::optional<Subprocess> child;
  try {
    child.emplace(Subprocess::Options{argv, env, -1, log_fd, log_fd});
  } catch (...) {
    ::close(log_fd);
    throw;
  }
  ::close(log_fd);
  return child->Wait(timeout_s, status);
}

}  // namespace aoti
