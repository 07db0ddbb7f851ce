// The oracle's verdict cache, against a compile server that answers as told
// (testdata/fake_compile_server.py): a candidate is compiled once, whoever builds it; a
// different program or different configs is another compile; a server death is retried
// at once; a hang or a death is not remembered until the same candidate has met it
// twice, so a transient fault does not mark a candidate "not failing" for the rest of the
// run.
#include "reducer/oracle.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include "harness/archive/pt2_archive.h"
#include "harness/util/temp_dir.h"
#include "harness/archive/tensor_bundle.h"
#include "reducer/compile_cache.h"
#include "reducer/graph_edit.h"
#include "reducer/testdata/fake_server.h"

DEFINE_string(python, "", "A Python interpreter.");
DEFINE_string(fake_server, "", "reducer/testdata/fake_compile_server.py");

namespace aoti {
namespace {

class OracleCache : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<FakeServer>(FLAGS_python, FLAGS_fake_server, 2);
    client_ = std::make_unique<CompileClient>(server_->options());
    archive_ = Pt2Archive::Open("testdata/corpus/mlp.pt2");
    program_ = Program::Parse(archive_->ProgramJson("model"), "mlp");
    const auto names = UserInputNames(program_);
    const auto inputs = archive_->SampleInputs();
    for (size_t i = 0; i < names.size(); ++i) values_.Put(names[i], inputs[i]);
    work_ = std::make_unique<TempDir>("oracle_test");
    oracle_ = std::make_unique<Oracle>(*archive_, "model", "{}", &values_, CheckOptions{}, client_.get(),
                                       work_->path());
    oracle_->SetTarget("accuracy", "");
  }

  void SetMode(const std::string& mode) { server_->SetMode(mode); }

  // The first k nodes (the last one's value returned): a smaller candidate.
  Program Prefix(size_t k) {
    std::vector<bool> keep(program_.nodes.size(), false);
    for (size_t i = 0; i < k; ++i) keep[i] = true;
    return KeepNodes(program_, keep, OutputMode::kLast);
  }

  std::unique_ptr<FakeServer> server_;
  std::unique_ptr<CompileClient> client_;
  std::unique_ptr<Pt2Archive> archive_;
  Program program_;
  ValueStore values_;
  std::unique_ptr<TempDir> work_;
  std::unique_ptr<Oracle> oracle_;
};

TEST_F(OracleCache, ACandidateIsCompiledOnceWhoeverBuildsIt) {
  const Verdict first = oracle_->Test(Prefix(3));
  EXPECT_FALSE(first.cached);
  EXPECT_EQ(oracle_->compiles(), 1);
  // The same program, built again from scratch: the same structural key.
  const Verdict again = oracle_->Test(Prefix(3));
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.failure_class, first.failure_class);
  EXPECT_EQ(oracle_->compiles(), 1);
  EXPECT_EQ(oracle_->cache_hits(), 1);
  EXPECT_EQ(Oracle::Key(Prefix(3)), Oracle::Key(Prefix(3)));
  // Another program is another compile.
  oracle_->Test(Prefix(2));
  EXPECT_EQ(oracle_->compiles(), 2);
  EXPECT_NE(Oracle::Key(Prefix(2)), Oracle::Key(Prefix(3)));
  // The compile record stays, for the strategies that read the compiler's words.
  ASSERT_NE(oracle_->Compiled(Prefix(3)), nullptr);
  EXPECT_EQ(oracle_->Compiled(Prefix(3))->phase, "done");
  EXPECT_EQ(oracle_->Compiled(Prefix(4)), nullptr);
}

TEST_F(OracleCache, OtherConfigsAreAnotherCompileOfTheirOwn) {
  oracle_->Test(Prefix(3));
  CompiledOutcome outcome;
  std::string problem;
  // The fake server writes no archive, so the run fails; the compile is what counts here.
  oracle_->RunWithConfigs(Prefix(3), R"({"aot_inductor.debug_intermediate_value_printer": "\"3\""})", &outcome, &problem);
  EXPECT_EQ(oracle_->compiles(), 2);
  oracle_->RunWithConfigs(Prefix(3), R"({"aot_inductor.debug_intermediate_value_printer": "\"3\""})", &outcome, &problem);
  EXPECT_EQ(oracle_->compiles(), 2) << "the same configs again must not recompile";
  EXPECT_TRUE(oracle_->Test(Prefix(3)).cached) << "the plain verdict is unaffected";
}

TEST_F(OracleCache, AServerDeathIsRetriedAtOnce) {
  SetMode("die");
  const Verdict v = oracle_->Test(Prefix(3));
  EXPECT_EQ(oracle_->compiles(), 2) << "one retry after the death";
  EXPECT_EQ(v.failure_class, "compile server server");
  EXPECT_FALSE(v.fails);
}

TEST_F(OracleCache, ATransientFaultIsRememberedOnlyOnceItRepeats) {
  SetMode("hang");
  const Verdict first = oracle_->Test(Prefix(3));
  EXPECT_EQ(first.failure_class, "compile server timeout");
  EXPECT_EQ(oracle_->compiles(), 1);
  // The server recovered: the candidate is compiled again and gets its real verdict.
  SetMode("ok");
  const Verdict second = oracle_->Test(Prefix(3));
  EXPECT_FALSE(second.cached);
  EXPECT_EQ(oracle_->compiles(), 2);
  EXPECT_NE(second.failure_class, "compile server timeout");
  // A candidate that times out twice is remembered as such: no third compile.
  SetMode("hang");
  oracle_->Test(Prefix(2));
  oracle_->Test(Prefix(2));
  EXPECT_EQ(oracle_->compiles(), 4);
  SetMode("ok");
  const Verdict third = oracle_->Test(Prefix(2));
  EXPECT_TRUE(third.cached);
  EXPECT_EQ(third.failure_class, "compile server timeout");
  EXPECT_EQ(oracle_->compiles(), 4);
}

// The disk cache's key holds the compile environment: the compiler and its version (another
// $CXX is another key), the torch build's git hash, and the GPUs.
TEST(CompileEnvironment, NamesTheCompilerTheTorchBuildAndTheGpus) {
  ::unsetenv("CXX");
  const std::string gxx = Oracle::CompileEnvironment();
  EXPECT_NE(gxx.find("compiler g++ ("), std::string::npos) << gxx;
  EXPECT_EQ(gxx.find("version unknown"), std::string::npos) << gxx;
  EXPECT_TRUE(std::regex_search(gxx, std::regex("git [0-9a-f]{40};"))) << gxx;
  EXPECT_NE(gxx.find("; gpus "), std::string::npos) << gxx;
  ::setenv("CXX", "clang++", 1);
  const std::string clang = Oracle::CompileEnvironment();
  ::unsetenv("CXX");
  EXPECT_NE(clang, gxx);
  EXPECT_NE(clang.find("compiler clang++"), std::string::npos) << clang;
}

// The harness' own trouble is never the candidate's verdict: an archive the server could
// not write, or one that is gone, is judged this time and compiled again next time.
TEST_F(OracleCache, TheHarnessOwnTroubleIsNeverCached) {
  SetMode("write_error");
  const Verdict write = oracle_->Test(Prefix(3));
  EXPECT_EQ(write.failure_class, "compile server write");
  EXPECT_FALSE(write.fails);
  SetMode("nothing");
  const Verdict gone = oracle_->Test(Prefix(3));
  EXPECT_FALSE(gone.cached);
  EXPECT_EQ(gone.failure_class, "harness error") << gone.message;
  EXPECT_EQ(oracle_->compiles(), 2);
  SetMode("ok");
  const Verdict real = oracle_->Test(Prefix(3));
  EXPECT_FALSE(real.cached) << "a verdict of the harness' trouble was remembered";
  EXPECT_EQ(oracle_->compiles(), 3);
  // Judged on an archive that is there (this test has no runner to run it): remembered.
  EXPECT_TRUE(oracle_->Test(Prefix(3)).cached);
}

// The compile cache's key holds the harness: its version and the code that compiles (the
// compile server, the packager, the module of its own keys), by contents. A harness that
// compiles differently never takes another's entries, locally or from a fleet's server.
TEST_F(OracleCache, TheDiskKeyHoldsTheCodeThatCompiles) {
  namespace fs = std::filesystem;
  CompileCache cache(CompileCacheOptions{work_->path() + "/cache"});
  int n = 0;
  auto key_with = [&](const std::string& packager, const std::string& module = "# a module\n") {
    const std::string dir = work_->path() + "/tools_" + std::to_string(++n);
    fs::create_directories(dir);
    WriteTextFile(dir + "/compile_server.py", "# the server\n");
    WriteTextFile(dir + "/package_model.py", packager);
    fs::create_directories(dir + "/aoti_package");
    WriteTextFile(dir + "/aoti_package/cli.py", module);
    WriteTextFile(dir + "/aoti_aten_fallbacks.py", "# the harness's keys\n");
    CompileServerOptions o = server_->options();
    o.server_script = dir + "/compile_server.py";
    CompileClient client(o);
    Oracle oracle(*archive_, "model", "{}", &values_, CheckOptions{}, &client, work_->path());
    oracle.UseDiskCache(&cache);
    return oracle.DiskKey(program_, archive_->SampleInputs(), "{}");
  };
  const std::string v1 = key_with("# packager 1\n");
  EXPECT_EQ(v1, key_with("# packager 1\n")) << "the same tools at another path: the same key";
  EXPECT_NE(v1, key_with("# packager 2\n")) << "another packager: another key";
  EXPECT_NE(v1, key_with("# packager 1\n", "# another module\n")) << "another module of the packager: another key";
}

}  // namespace
}  // namespace aoti
