// CompileClient: the reducer's side of tools/compile_server.py. Starts the server lazily
// (torch is imported once per server), sends one JSON line per compile, enforces a
// per-compile timeout, restarts a server that died or hung, and never leaves it running
// after the client goes away (its own process group, killed with its parent). The server
// gets an explicit environment (harness/util/subprocess.h) without PyTorch's debug variables.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/util/deadline.h"
#include "harness/util/subprocess.h"
#include "harness/util/temp_dir.h"

namespace aoti {

struct CompileServerOptions {
  std::string python;          // interpreter with torch
  std::string server_script;   // tools/compile_server.py (package_model.py beside it)
  double timeout_s = 600;      // per compile
  std::string log_path;        // the server's stderr; /dev/null if empty
  std::vector<std::string> op_libraries;  // custom-op libraries the programs call
  // Modules of the programs' pytree types the model repository declares
  // (RunnerOptions::pytree_modules): the only ones the server imports to read a program.
  std::vector<std::string> pytree_modules;
  // PyTorch debug variables (StrippedTorchVariables) the server keeps; "*" keeps all.
  // By default none: DUMP_AOTI_MINIFIER inherited from a test would run torch's own
  // minifier, and the model, inside the server.
  std::vector<std::string> env_pass_through;
  // Inductor's precompiled headers, shared by servers and kept across runs
  // (PrecompiledHeadersDir); "": each server builds its own.
  std::string precompiled_headers_dir;
  // deadline: no compile outlasts it (each one's timeout is capped at what is left), and
  // none starts once it has passed (phase "timeout").
  Deadline deadline;
};

struct CompileResult {
  bool ok = false;
  std::string phase;     // "done", "load", "compile", "timeout", "server"
  double seconds = 0;
  std::string out;       // the archive written (program + inputs + compiled model or failure)
  std::string error_type, message, compiler_errors;
  bool started = true;   // false: refused before any work, the deadline having passed
  // Inductor's provenance record, as JSON (reducer/kernel_map.h, KernelProvenance), when the
  // compile asked for one (trace.provenance_tracking_level); kept also when it failed.
  std::string kernel_information;
};

class CompileClient {
 public:
  explicit CompileClient(CompileServerOptions options) : options_(std::move(options)) {}
  ~CompileClient();
  CompileClient(const CompileClient&) = delete;
  CompileClient& operator=(const CompileClient&) = delete;

  // Compile: program archive in, compiled archive at `out`. Never throws for a model
  // problem; throws HarnessError when the server cannot be started at all.
  CompileResult Compile(const std::string& program, const std::string& out, const std::string& inductor_configs_json);

  const CompileServerOptions& options() const { return options_; }
  // SetDeadline: from now on no compile outlasts `deadline` (CompileServerOptions::deadline).
  void SetDeadline(Deadline deadline) { options_.deadline = std::move(deadline); }
  // Warm: starts the server now, without waiting for it, so that importing torch runs
  // beside the caller's own work; the first Compile waits for it (and throws as Compile
  // does when it cannot start).
  void Warm();

  int restarts() const { return restarts_; }
  int requests() const { return requests_; }

 private:
  void Start();
  void Stop();
  [[noreturn]] void StartFailed(const std::string& problem);
  // Exchange sends one request (Send) and waits for its answer line, or the deadline
  // (Receive: answers to earlier, abandoned requests are skipped).
  bool Exchange(const nlohmann::json& request, double timeout_s, nlohmann::json* answer, std::string* problem);
  bool Send(const nlohmann::json& request, std::string* problem);
  bool Receive(int64_t request_id, double timeout_s, nlohmann::json* answer, std::string* problem);

  CompileServerOptions options_;
  std::unique_ptr<Subprocess> server_;
  std::unique_ptr<TempDir> server_tmp_;  // the server's TMPDIR
  int to_server_ = -1, from_server_ = -1;
  std::string buffer_;
  int restarts_ = 0, requests_ = 0, next_id_ = 1;
  bool started_once_ = false;
  bool ping_pending_ = false;  // started; its first answer not read yet
};

}  // namespace aoti
