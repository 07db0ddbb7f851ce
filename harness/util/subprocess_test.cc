// Subprocess and ChildEnvironment: PyTorch's debug variables never reach a child unless
// passed on purpose, the child sees exactly the environment built for it, and signals,
// exit codes and timeouts come back as they happened.
#include "harness/util/subprocess.h"

#include <chrono>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "harness/util/errors.h"

namespace aoti {
namespace {

bool Has(const std::vector<std::string>& env, const std::string& entry) {
  return std::find(env.begin(), env.end(), entry) != env.end();
}

bool HasName(const std::vector<std::string>& env, const std::string& name) {
  return std::any_of(env.begin(), env.end(), [&](const std::string& e) { return e.rfind(name + "=", 0) == 0; });
}

// Every stripped variable, set in this process (prefixes get one concrete name).
void SetAllStripped() {
  for (auto name : StrippedTorchVariables()) {
    if (name.back() == '*') name = name.substr(0, name.size() - 1) + "AFTER";
    ::setenv(name.c_str(), "1", 1);
  }
}

TEST(ChildEnvironment, StripsEveryTorchDebugVariable) {
  SetAllStripped();
  ::setenv("AOTI_SUBPROCESS_TEST_KEEP", "kept", 1);
  const auto env = ChildEnvironment({});
  for (auto name : StrippedTorchVariables()) {
    if (name.back() == '*') name = name.substr(0, name.size() - 1) + "AFTER";
    SCOPED_TRACE(name);
    EXPECT_FALSE(HasName(env, name));
  }
  EXPECT_TRUE(Has(env, "AOTI_SUBPROCESS_TEST_KEEP=kept"));
  EXPECT_TRUE(HasName(env, "PATH"));
}

TEST(ChildEnvironment, NamesTheVariablesTheIssueNamed) {
  for (const char* name : {"DUMP_AOTI_MINIFIER", "AOTINDUCTOR_REPRO_LEVEL", "TORCHDYNAMO_REPRO_AFTER",
                           "TORCHDYNAMO_REPRO_LEVEL", "TORCH_COMPILE_DEBUG", "TORCHINDUCTOR_NAN_ASSERTS",
                           "AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER"}) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(IsStrippedTorchVariable(name));
  }
  EXPECT_FALSE(IsStrippedTorchVariable("TORCHINDUCTOR_CACHE_DIR"));
  EXPECT_FALSE(IsStrippedTorchVariable("PATH"));
}

// tools/package_model.py strips the same variables before it imports torch (a Bazel
// action, not our child); its list (tools/aoti_package/common.py) must be this one.
TEST(ChildEnvironment, PackagingToolStripsTheSameList) {
  std::ifstream in("tools/aoti_package/common.py");
  ASSERT_TRUE(in) << "tools/aoti_package/common.py is not in the runfiles";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const size_t start = text.find("STRIPPED_TORCH_VARIABLES = (");
  ASSERT_NE(start, std::string::npos);
  const size_t end = text.find(')', start);
  const std::string block = text.substr(start, end - start);
  std::vector<std::string> python;
  for (size_t q = block.find('"'); q != std::string::npos; q = block.find('"', block.find('"', q + 1) + 1)) {
    python.push_back(block.substr(q + 1, block.find('"', q + 1) - q - 1));
  }
  std::vector<std::string> cc = StrippedTorchVariables();
  std::sort(python.begin(), python.end());
  std::sort(cc.begin(), cc.end());
  EXPECT_EQ(python, cc);
}

TEST(ChildEnvironment, PassThroughAndSet) {
  SetAllStripped();
  auto env = ChildEnvironment({{"DUMP_AOTI_MINIFIER"}, {{"AOTI_RUNTIME_CHECK_INPUTS", "1"}, {"PATH", "/x"}}});
  EXPECT_TRUE(Has(env, "DUMP_AOTI_MINIFIER=1"));
  EXPECT_FALSE(HasName(env, "AOTINDUCTOR_REPRO_LEVEL"));
  EXPECT_TRUE(Has(env, "AOTI_RUNTIME_CHECK_INPUTS=1"));
  EXPECT_TRUE(Has(env, "PATH=/x"));
  EXPECT_EQ(std::count_if(env.begin(), env.end(), [](const std::string& e) { return e.rfind("PATH=", 0) == 0; }), 1);
  env = ChildEnvironment({{"*"}, {}});
  EXPECT_TRUE(HasName(env, "AOTINDUCTOR_REPRO_LEVEL"));
  EXPECT_TRUE(HasName(env, "TORCHDYNAMO_REPRO_AFTER"));
}

std::string RunAndCapture(const std::vector<std::string>& argv, const std::vector<std::string>& env, int* status) {
  char path[] = "/tmp/aoti_subprocess_test.XXXXXX";
  const int fd = ::mkstemp(path);
  {
    Subprocess child({argv, env, -1, fd, fd});
    ::close(fd);
    EXPECT_TRUE(child.Wait(30, status));
  }
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  ::unlink(path);
  return ss.str();
}

// execve searches no PATH: a bare name is found on PATH, a path is left as it is, and a
// name that is nowhere is an error naming it and PATH.
TEST(FindExecutable, SearchesPathForABareName) {
  const std::string sh = FindExecutable("sh");
  EXPECT_EQ(sh.front(), '/') << sh;
  EXPECT_EQ(sh.substr(sh.size() - 3), "/sh");
  EXPECT_EQ(FindExecutable("./relative/python3"), "./relative/python3");
  try {
    FindExecutable("no_such_interpreter_anywhere");
    FAIL() << "no error";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("'no_such_interpreter_anywhere' is not an executable file"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("PATH"), std::string::npos) << e.what();
  }
}

TEST(Subprocess, ChildSeesExactlyTheBuiltEnvironment) {
  SetAllStripped();
  int status = 0;
  const std::string out = RunAndCapture({"/usr/bin/env"}, ChildEnvironment({{}, {{"AOTI_MARK", "yes"}}}), &status);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NE(out.find("AOTI_MARK=yes"), std::string::npos);
  EXPECT_EQ(out.find("DUMP_AOTI_MINIFIER"), std::string::npos) << out;
  EXPECT_EQ(out.find("TORCHDYNAMO_REPRO"), std::string::npos) << out;
}

TEST(Subprocess, ReportsExitStatusAndSignal) {
  int status = 0;
  RunAndCapture({"/bin/sh", "-c", "exit 7"}, {}, &status);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
  RunAndCapture({"/bin/sh", "-c", "kill -SEGV $$"}, {}, &status);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(SignalName(WTERMSIG(status)), "SIGSEGV");
}

TEST(Subprocess, MissingExecutableExits127) {
  int status = 0;
  const std::string out = RunAndCapture({"/nonexistent/program"}, {}, &status);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 127);
  EXPECT_NE(out.find("exec /nonexistent/program failed"), std::string::npos);
}

TEST(Subprocess, TimeoutKillsTheWholeGroup) {
  // The shell starts a grandchild in the same group; both must be gone after the timeout.
  char path[] = "/tmp/aoti_subprocess_pid.XXXXXX";
  const int fd = ::mkstemp(path);
  ::close(fd);
  int status = 0;
  pid_t group;
  {
    Subprocess child({{"/bin/sh", "-c", std::string("sleep 300 & echo $! > ") + path + "; wait"}, {}});
    group = child.pid();
    EXPECT_FALSE(child.Wait(1.0, &status));
  }
  std::ifstream in(path);
  pid_t grandchild = 0;
  in >> grandchild;
  ::unlink(path);
  ASSERT_GT(grandchild, 0);
  for (int i = 0; i < 100 && ::kill(grandchild, 0) == 0; ++i) ::usleep(20000);
  EXPECT_NE(::kill(grandchild, 0), 0) << "the grandchild survived the timeout";
  EXPECT_NE(::kill(-group, 0), 0) << "the process group survived the timeout";
}

// PR_SET_PDEATHSIG follows the thread that forked: a child started from a worker thread
// must outlive that thread (every fork happens on the spawner thread).
TEST(Subprocess, AChildOutlivesTheThreadThatStartedIt) {
  std::unique_ptr<Subprocess> child;
  std::thread starter([&] { child = std::make_unique<Subprocess>(Subprocess::Options{{"/bin/sleep", "30"}, {}}); });
  starter.join();
  ::usleep(300000);  // the signal, if any, would have arrived by now
  int status = 0;
  EXPECT_EQ(::waitpid(child->pid(), &status, WNOHANG), 0) << "the child died with the thread that started it";
  EXPECT_TRUE(child->running());
  child->Kill();
}

// An extra descriptor reaches the child under the number asked for (a dedicated answer pipe).
TEST(Subprocess, PassesExtraDescriptors) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  Subprocess::Options o;
  o.argv = {"/bin/sh", "-c", "echo answer >&3"};
  o.extra_fds = {{p[1], 3}};
  int status = 0;
  {
    Subprocess child(o);
    ::close(p[1]);
    EXPECT_TRUE(child.Wait(30, &status));
  }
  char buf[64] = {};
  const ssize_t n = ::read(p[0], buf, sizeof(buf) - 1);
  ::close(p[0]);
  EXPECT_EQ(std::string(buf, n > 0 ? n : 0), "answer\n");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(Subprocess, RefusesAnExtraDescriptorOverStdio) {
  Subprocess::Options o;
  o.argv = {"/bin/true"};
  o.extra_fds = {{0, 1}};
  EXPECT_THROW(Subprocess child(o), HarnessError);
}

// A probe (a compiler's --version, nvidia-smi) that hangs is killed at its timeout with its
// whole group, and says nothing; one that answers gives its stdout alone.
TEST(CommandOutput, AHungProbeIsKilledAtItsTimeout) {
  EXPECT_EQ(CommandOutput("echo hello; echo noise >&2"), "hello");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(CommandOutput("sleep 30 & sleep 30; echo late", 1), "");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(took, 10) << "the probe ran past its timeout";
}

// A child's output captured whole (stdout and stderr), its status given, and the file it
// went through removed.
TEST(RunCaptured, GivesTheOutputAndStatusAndLeavesNoFile) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") + "/captured";
  ASSERT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ::setenv("TMPDIR", dir.c_str(), 1);
  int status = 0;
  std::string output;
  EXPECT_TRUE(RunCaptured({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, ChildEnvironment({}), 10, &status, &output));
  EXPECT_EQ(output, "out\nerr\n");
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_FALSE(RunCaptured({"/bin/sh", "-c", "echo early; sleep 30"}, ChildEnvironment({}), 1, &status, &output));
  EXPECT_EQ(output, "early\n");
  EXPECT_TRUE(RunCaptured({"/no/such/program"}, ChildEnvironment({}), 10, &status, &output));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 127);  // as Subprocess: exec failed in the child
  ::setenv("TMPDIR", (dir + "/missing").c_str(), 1);
  EXPECT_THROW(RunCaptured({"/bin/true"}, ChildEnvironment({}), 10, &status, &output), HarnessError);
  if (old) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  EXPECT_EQ(std::system(("test -z \"$(ls -A " + dir + ")\"").c_str()), 0) << "a capture file was left in " << dir;
}

}  // namespace
}  // namespace aoti
