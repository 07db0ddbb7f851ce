#include "reducer/compile_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "harness/util/errors.h"

namespace aoti {
namespace {

constexpr int kAnswerFd = 3;  // the server's answer descriptor
constexpr char kNoAnswer[] = "no answer within ";  // Receive's problem when its wait ran out

// TimedOut: whether Receive's problem is that its wait ran out (not a server that failed).
bool TimedOut(const std::string& problem) { return problem.rfind(kNoAnswer, 0) == 0; }

}  // namespace

CompileClient::~CompileClient() { Stop(); }

void CompileClient::Start() {
  // Requests on the server's stdin; answers on a dedicated pipe (its descriptor 3), so
  // nothing a library prints on stdout can corrupt one.
  int in_pipe[2], out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) {
    throw HarnessError(std::string("compile server: pipe failed: ") + std::strerror(errno));
  }
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    const int err = errno;
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    throw HarnessError(std::string("compile server: pipe failed: ") + std::strerror(err));
  }
  const std::string log = options_.log_path.empty() ? "/dev/null" : options_.log_path;
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  auto close_child_ends = [&] {
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    if (log_fd >= 0) ::close(log_fd);
  };
  try {
    Subprocess::Options spawn;
    spawn.argv = {options_.python, "-u", options_.server_script, "--answer-fd", std::to_string(kAnswerFd)};
    if (!options_.precompiled_headers_dir.empty()) {
      spawn.argv.insert(spawn.argv.end(), {"--precompiled-headers", options_.precompiled_headers_dir});
    }
    // The server's temporary files (its private inductor cache among them) live in a
    // directory this client removes, so a server killed at a timeout leaves nothing.
    server_tmp_ = std::make_unique<TempDir>("aoti_compile_server");
    spawn.env = ChildEnvironment({options_.env_pass_through, {{"TMPDIR", server_tmp_->path()}}});
    spawn.stdin_fd = in_pipe[0];
    spawn.stdout_fd = log_fd;
    spawn.stderr_fd = log_fd;
    spawn.extra_fds = {{out_pipe[1], kAnswerFd}};
    server_ = std::make_unique<Subprocess>(spawn);
  } catch (...) {
    close_child_ends();
    ::close(in_pipe[1]);
    ::close(out_pipe[0]);
    throw;
  }
  close_child_ends();
  to_server_ = in_pipe[1];
  from_server_ = out_pipe[0];
  ::signal(SIGPIPE, SIG_IGN);  // a dead server is an error answer, not a dead client
  buffer_.clear();
  if (started_once_) ++restarts_;
  started_once_ = true;
  // The first answer proves torch imported (a few seconds, then the server probes the
  // host's vector ISAs): awaited before the first compile, not here, so that a Warm
  // start runs beside the caller's own work.
  std::string problem;
  if (!Send({{"id", 0}, {"op", "ping"}}, &problem)) StartFailed(problem);
  ping_pending_ = true;
}

void CompileClient::StartFailed(const std::string& problem) {
  Stop();
  throw HarnessError("the compile server (" + options_.python + " " + options_.server_script +
                     ") did not start: " + problem + (options_.log_path.empty() ? "" : "; see " + options_.log_path));
}

void CompileClient::Warm() {
  if (!server_) Start();
}

void CompileClient::Stop() {
  if (!server_) return;
  if (to_server_ >= 0) ::close(to_server_);
  if (from_server_ >= 0) ::close(from_server_);
  to_server_ = from_server_ = -1;
  ping_pending_ = false;
  server_.reset();  // kills the group and reaps
  server_tmp_.reset();
}

bool CompileClient::Send(const nlohmann::json& request, std::string* problem) {
  const std::string line = request.dump() + "\n";
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(to_server_, line.data() + written, line.size() - written);
    if (n <= 0) {
      *problem = "the server is gone (write failed)";
      return false;
    }
    written += static_cast<size_t>(n);
  }
  return true;
}

bool CompileClient::Exchange(const nlohmann::json& request, double timeout_s, nlohmann::json* answer,
                             std::string* problem) {
  return Send(request, problem) && Receive(request.at("id").get<int64_t>(), timeout_s, answer, problem);
}

bool CompileClient::Receive(int64_t request_id, double timeout_s, nlohmann::json* answer, std::string* problem) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    const size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      const std::string reply = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      nlohmann::json parsed = nlohmann::json::parse(reply, nullptr, /*allow_exceptions=*/false);
      if (parsed.is_discarded() || !parsed.is_object()) {
        *problem = "unreadable answer (not a JSON object): '" + reply.substr(0, 200) + "'";
        return false;
      }
      const auto id = parsed.find("id");
      if (id == parsed.end() || !id->is_number_integer()) {
        *problem = "answer without a request id: '" + reply.substr(0, 200) + "'";
        return false;
      }
      if (id->get<int64_t>() == request_id) {
        *answer = std::move(parsed);
        return true;
      }
      if (id->get<int64_t>() > request_id) {
        *problem = "answer to request " + std::to_string(id->get<int64_t>()) + ", which was never sent (waiting for " +
                   std::to_string(request_id) + ")";
        return false;
      }
      continue;  // an answer to an abandoned (earlier) request
    }
    // Rounded up: the wait never ends before the deadline (a caller capped by a Deadline then
    // finds it passed, and tells a timeout at the deadline from a server that did not answer).
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      *problem = kNoAnswer + std::to_string(timeout_s) + " s";
      return false;
    }
    pollfd pfd{from_server_, POLLIN, 0};
    const int r = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) {
      *problem = std::string("poll failed: ") + std::strerror(errno);
      return false;
    }
    if (r > 0) {
      char buf[65536];
      const ssize_t n = ::read(from_server_, buf, sizeof(buf));
      if (n <= 0) {
        *problem = "the server exited";
        return false;
      }
      buffer_.append(buf, static_cast<size_t>(n));
    }
  }
}

CompileResult CompileClient::Compile(const std::string& program, const std::string& out,
                                     const std::string& inductor_configs_json) {
  CompileResult r;
  // Out of the process' time: no compile starts, and none outlasts the deadline.
  const double allowed = options_.deadline.Cap(options_.timeout_s);
  if (!(allowed > 0)) {
    r.phase = "timeout";
    r.started = false;
    r.message = "compile server: not compiled: no time is left before " + options_.deadline.what();
    return r;
  }
  if (!server_) Start();
  if (ping_pending_) {
    nlohmann::json pong;
    std::string problem;
    // Whether the deadline, not the server's own start-up allowance, sets this wait is
    // decided before it, not after (when it would race with the clock).
    const bool deadline_caps = options_.deadline.Caps(300);
    if (!Receive(0, options_.deadline.Cap(300), &pong, &problem)) {
      if (deadline_caps && TimedOut(problem)) {
        // Out of time while the server was starting: a timeout of this compile, not a server
        // that cannot start.
        Stop();
        r.phase = "timeout";
        r.message = "compile server: not compiled: the server was still starting at the deadline of " +
                    options_.deadline.what();
        return r;
      }
      StartFailed(problem);
    }
    ping_pending_ = false;
  }
  ++requests_;
  const nlohmann::json request = {{"id", next_id_++},
                                  {"op", "compile"},
                                  {"program", program},
                                  {"out", out},
                                  {"inductor_configs", nlohmann::json::parse(inductor_configs_json)},
                                  {"op_libraries", options_.op_libraries},
                                  {"pytree_modules", options_.pytree_modules}};
  nlohmann::json answer;
  std::string problem;
  const auto start = std::chrono::steady_clock::now();
  const double timeout = options_.deadline.Cap(options_.timeout_s);
  if (!Exchange(request, timeout, &answer, &problem)) {
    const bool timed_out = TimedOut(problem);
    Stop();  // restarted lazily by the next request
    r.phase = timed_out ? "timeout" : "server";
    r.message = "compile server: " + problem +
                (timed_out && timeout < options_.timeout_s ? " (stopped at the deadline of " + options_.deadline.what() + ")"
                                                           : "");
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }
  try {
    r.ok = answer.value("ok", false);
    r.phase = answer.value("phase", "");
    r.seconds = answer.value("seconds", 0.0);
    r.out = answer.value("out", "");
    if (answer.contains("kernel_information")) r.kernel_information = answer.at("kernel_information").dump();
    if (answer.contains("error")) {
      const auto& e = answer.at("error");
      r.error_type = e.value("type", "");
      r.message = e.value("message", "");
      r.compiler_errors = e.value("compiler_errors", "");
    }
  } catch (const nlohmann::json::exception& e) {
    // A field of the wrong type: the server is not speaking the protocol; start afresh.
    Stop();
    CompileResult bad;
    bad.phase = "server";
    bad.message = "compile server: malformed answer (" + std::string(e.what()) + "): " + answer.dump().substr(0, 200);
    bad.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return bad;
  }
  return r;
}

}  // namespace aoti
