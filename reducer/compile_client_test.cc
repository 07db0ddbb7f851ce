// The compile client against a server that misbehaves on purpose
// (testdata/fake_compile_server.py): it hangs, dies mid-answer, prints garbage on stdout,
// answers with a wrong or missing id, or with fields of the wrong type. The client never
// throws, says what happened, kills what it started, and the next request gets a fresh
// server.
#include "reducer/compile_client.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

DEFINE_string(python, "", "A Python interpreter.");
DEFINE_string(fake_server, "", "reducer/testdata/fake_compile_server.py");

namespace aoti {
namespace {

using ::testing::HasSubstr;

class CompileClientFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string tmp = std::getenv("TEST_TMPDIR");
    mode_file_ = tmp + "/mode";
    pid_file_ = tmp + "/pids";
    std::remove(pid_file_.c_str());
    ::setenv("FAKE_SERVER_MODE_FILE", mode_file_.c_str(), 1);
    ::setenv("FAKE_SERVER_PID_FILE", pid_file_.c_str(), 1);
    SetMode("ok");
    CompileServerOptions o;
    o.python = FLAGS_python;
    o.server_script = FLAGS_fake_server;
    o.timeout_s = 3;
    o.log_path = tmp + "/server.log";
    client_ = std::make_unique<CompileClient>(o);
  }

  void SetMode(const std::string& mode) { std::ofstream(mode_file_) << mode << "\n"; }

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

  std::string mode_file_, pid_file_;
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

TEST_F(CompileClientFaults, AHangingServerTimesOutAndIsKilled) {
  SetMode("hang");
  const CompileResult r = Compile();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.phase, "timeout");
  EXPECT_THAT(r.message, HasSubstr("no answer within"));
  ExpectRecovers(0);
}

TEST_F(CompileClientFaults, AServerThatDiesMidAnswerIsAServerFailure) {
  SetMode("die");
  const CompileResult r = Compile();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.phase, "server");
  EXPECT_THAT(r.message, HasSubstr("exited"));
  ExpectRecovers(0);
}

TEST_F(CompileClientFaults, AnAnswerToARequestNeverSentIsAServerFailure) {
  SetMode("wrong_id");
  const CompileResult r = Compile();
  EXPECT_EQ(r.phase, "server");
  EXPECT_THAT(r.message, HasSubstr("never sent"));
  ExpectRecovers(0);
}

TEST_F(CompileClientFaults, AnAnswerWithoutAnIdIsAServerFailureNotAnException) {
  SetMode("null_id");
  CompileResult r;
  EXPECT_NO_THROW(r = Compile());
  EXPECT_EQ(r.phase, "server");
  EXPECT_THAT(r.message, HasSubstr("without a request id"));
  ExpectRecovers(0);
}

TEST_F(CompileClientFaults, FieldsOfTheWrongTypeAreAServerFailureNotAnException) {
  SetMode("bad_types");
  CompileResult r;
  EXPECT_NO_THROW(r = Compile());
  EXPECT_EQ(r.phase, "server");
  EXPECT_THAT(r.message, HasSubstr("malformed answer"));
  ExpectRecovers(0);
}

TEST_F(CompileClientFaults, ALineThatIsNotJsonIsAServerFailure) {
  SetMode("not_json");
  CompileResult r;
  EXPECT_NO_THROW(r = Compile());
  EXPECT_EQ(r.phase, "server");
  EXPECT_THAT(r.message, HasSubstr("not a JSON object"));
  ExpectRecovers(0);
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
