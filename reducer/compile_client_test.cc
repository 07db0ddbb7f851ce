// The compile client against a server that misbehaves on purpose
// (testdata/fake_compile_server.py): it hangs, dies mid-answer, prints garbage on stdout,
// answers with a wrong or missing id, or with fields of the wrong type. The client never
// throws, says what happened, kills what it started, and the next request gets a fresh
// server.
#include "reducer/compile_client.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reducer/testdata/fake_server.h"

DEFINE_string(python, "", "A Python interpreter.");
DEFINE_string(fake_server, "", "reducer/testdata/fake_compile_server.py");

namespace aoti {
namespace {

using ::testing::HasSubstr;

class CompileClientFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<FakeServer>(FLAGS_python, FLAGS_fake_server, 3);
    pid_file_ = server_->pid_file();
    client_ = std::make_unique<CompileClient>(server_->options());
  }

  void SetMode(const std::string& mode) { server_->SetMode(mode); }

  CompileResult Compile() { return client_->Compile("cand.pt2", "cand_aoti.pt2", "{}"); }

  std::vector<pid_t> ServerPids() {
    std::vector<pid_t> pids;
    std::ifstream in(pid_file_);
    for (long p; in >> p;) pids.push_back(static_cast<pid_t>(p));
    return pids;
  }

  // Alive: the process exists after a grace period of 2 s (a killed grandchild is reaped
  // by init, not by us).
  static bool Alive(pid_t pid) {
    for (int i = 0; i < 200; ++i) {
      if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
      ::usleep(10000);
    }
    return true;
  }

  // After a failure: the failed server is gone (killed and reaped, not a zombie), and the
  // next request starts a new one that answers.
  void ExpectRecovers(int restarts_before) {
    const auto pids = ServerPids();
    ASSERT_FALSE(pids.empty());
    EXPECT_FALSE(Alive(pids.back())) << "the failed server " << pids.back() << " is still there";
    SetMode("ok");
    const CompileResult r = Compile();
    EXPECT_TRUE(r.ok) << r.phase << ": " << r.message;
    EXPECT_EQ(client_->restarts(), restarts_before + 1);
  }

  std::unique_ptr<FakeServer> server_;
  std::string pid_file_;
  std::unique_ptr<CompileClient> client_;
};

TEST_F(CompileClientFaults, AWellBehavedServerAnswers) {
  const CompileResult r = Compile();
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.phase, "done");
  EXPECT_EQ(r.out, "cand_aoti.pt2");
}

TEST_F(CompileClientFaults, GarbageOnStdoutDoesNotCorruptTheAnswer) {
  SetMode("stdout");
  const CompileResult r = Compile();
  EXPECT_TRUE(r.ok) << r.phase << ": " << r.message;
  EXPECT_EQ(client_->restarts(), 0);
}

// Each way a server can fail: the client's verdict and what it says, no exception, the
// failed server gone, and a fresh one for the next request.
struct Fault {
  const char* mode;
  const char* phase;
  const char* says;
};

class CompileClientFault : public CompileClientFaults, public ::testing::WithParamInterface<Fault> {};

TEST_P(CompileClientFault, IsAVerdictNotAnExceptionAndTheNextRequestGetsAFreshServer) {
  SetMode(GetParam().mode);
  CompileResult r;
  EXPECT_NO_THROW(r = Compile());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.phase, GetParam().phase);
  EXPECT_THAT(r.message, HasSubstr(GetParam().says));
  ExpectRecovers(0);
}

INSTANTIATE_TEST_SUITE_P(
    Faults, CompileClientFault,
    ::testing::Values(Fault{"hang", "timeout", "no answer within"},            // it hangs
                      Fault{"die", "server", "exited"},                        // it dies mid-answer
                      Fault{"wrong_id", "server", "never sent"},               // an answer to no request
                      Fault{"null_id", "server", "without a request id"},      // an error outside the request
                      Fault{"bad_types", "server", "malformed answer"},        // fields of the wrong type
                      Fault{"not_json", "server", "not a JSON object"}),       // not an answer at all
    [](const ::testing::TestParamInfo<Fault>& info) { return std::string(info.param.mode); });

// A deadline that passes while the server is still starting (importing torch) is a timeout
// of that compile, never "the server did not start" thrown at the reduction. Repeated with
// deadlines a few milliseconds apart, because the wait and the deadline end together.
TEST_F(CompileClientFaults, ADeadlineReachedWhileTheServerStartsIsATimeoutNotAnError) {
  SetMode("slow_start");
  for (int i = 0; i < 8; ++i) {
    client_ = std::make_unique<CompileClient>(server_->options());
    client_->SetDeadline(Deadline(Deadline::Clock::now() + std::chrono::milliseconds(200 + 7 * i), "a test deadline"));
    CompileResult r;
    ASSERT_NO_THROW(r = Compile()) << "try " << i;
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.phase, "timeout") << r.message;
    EXPECT_THAT(r.message, HasSubstr("still starting at the deadline of a test deadline"));
  }
  // After the deadline: refused before any work, no server started.
  const size_t starts = ServerPids().size();
  const CompileResult late = Compile();
  EXPECT_EQ(late.phase, "timeout");
  EXPECT_FALSE(late.started);
  EXPECT_EQ(ServerPids().size(), starts);
}

TEST_F(CompileClientFaults, TheServerGoesWithTheClient) {
  ASSERT_TRUE(Compile().ok);
  const pid_t pid = ServerPids().back();
  EXPECT_EQ(::kill(pid, 0), 0);
  client_.reset();
  EXPECT_FALSE(Alive(pid));
}

}  // namespace
}  // namespace aoti
