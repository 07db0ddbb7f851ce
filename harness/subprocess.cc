#include "harness/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "harness/errors.h"

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
  const std::string exec_failed = "exec " + options.argv[0] + " failed\n";
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    const int err = errno;
    ::close(null_fd);
    throw HarnessError("cannot start " + options.argv[0] + ": fork failed: " + std::strerror(err));
  }
  if (pid_ == 0) {
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
    ::execve(argv[0], argv.data(), envp.data());
    ssize_t ignored = ::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid_, pid_);
  ::close(null_fd);
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

}  // namespace aoti
