// FakeServer: tests' handle on testdata/fake_compile_server.py, a compile server that
// answers as its mode file says (ok, hang, die, ...). It sets the files the server reads
// up in TEST_TMPDIR and gives the client options that start it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "reducer/compile_client.h"

namespace aoti {

class FakeServer {
 public:
  FakeServer(const std::string& python, const std::string& script, double timeout_s) {
    const std::string tmp = std::getenv("TEST_TMPDIR");
    mode_file_ = tmp + "/mode";
    pid_file_ = tmp + "/pids";
    std::remove(pid_file_.c_str());
    ::setenv("FAKE_SERVER_MODE_FILE", mode_file_.c_str(), 1);
    ::setenv("FAKE_SERVER_PID_FILE", pid_file_.c_str(), 1);
    SetMode("ok");
    options_.python = python;
    options_.server_script = script;
    options_.timeout_s = timeout_s;
    options_.log_path = tmp + "/server.log";
  }

  // SetMode: how the server answers the next compile requests.
  void SetMode(const std::string& mode) const { std::ofstream(mode_file_) << mode << "\n"; }
  const CompileServerOptions& options() const { return options_; }
  // The file the server appends its pid to, one line per start.
  const std::string& pid_file() const { return pid_file_; }

 private:
  std::string mode_file_, pid_file_;
  CompileServerOptions options_;
};

}  // namespace aoti
