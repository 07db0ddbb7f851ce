// The disk compile cache on its own: a stored answer and archive come back on a later
// lookup (from another cache object, as in a later run); a different key misses; a
// corrupt entry is a miss and is removed; the least recently used entries go first when
// the cache passes its cap; a cache that cannot be created turns itself off.
#include "reducer/compile_cache.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include <arpa/inet.h>
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <netinet/in.h>
#include <sys/socket.h>

#include "harness/util/digest.h"
#include "harness/util/errors.h"
#include "harness/util/subprocess.h"
#include "harness/archive/tensor_bundle.h"

DEFINE_string(remote_client_python, "", "a Python with grpcio");
DEFINE_string(remote_client_script, "", "tools/remote_compile_cache.py");
DEFINE_string(fake_remote_cache, "", "reducer/testdata/fake_remote_cache.py");

namespace aoti {
namespace {

namespace fs = std::filesystem;

class CompileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = std::string(std::getenv("TEST_TMPDIR")) + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(tmp_);
    fs::create_directories(tmp_);
    dir_ = tmp_ + "/cache";
  }

  std::string Archive(const std::string& name, size_t bytes) {
    const std::string path = tmp_ + "/" + name;
    WriteTextFile(path, std::string(bytes, 'x'));
    return path;
  }

  static CompileResult Answer(const std::string& phase) {
    CompileResult r;
    r.ok = phase == "done";
    r.phase = phase;
    r.seconds = 12.5;
    if (phase == "compile") {
      r.error_type = "CppCompileError";
      r.message = "k.cpp: In function 'void cpp_fused_relu_0(float*)':\nerror: boom";
      r.compiler_errors = "error: boom";
    }
    return r;
  }

  std::string tmp_, dir_;
};

TEST_F(CompileCacheTest, AStoredCompileComesBackInALaterRun) {
  const std::string key = CompileCache::Key({"program", "relu", "configs", "{}"});
  {
    CompileCache first({dir_});
    EXPECT_FALSE(first.Lookup(key, tmp_ + "/out.pt2"));
    first.Store(key, Answer("compile"), Archive("compiled.pt2", 100));
    EXPECT_EQ(first.stores(), 1);
  }
  CompileCache later({dir_});
  const auto hit = later.Lookup(key, tmp_ + "/out.pt2");
  ASSERT_TRUE(hit);
  EXPECT_EQ(later.hits(), 1);
  EXPECT_EQ(hit->phase, "compile");
  EXPECT_FALSE(hit->ok);
  EXPECT_EQ(hit->message, Answer("compile").message);
  EXPECT_EQ(hit->out, tmp_ + "/out.pt2");
  EXPECT_EQ(ReadTextFile(tmp_ + "/out.pt2"), std::string(100, 'x'));
  // Any part of the key changes it.
  EXPECT_FALSE(later.Lookup(CompileCache::Key({"program", "relu", "configs", "{\"a\": 1}"}), tmp_ + "/o.pt2"));
  EXPECT_NE(CompileCache::Key({"ab", "c"}), CompileCache::Key({"a", "bc"}));
}

// The key names code a cache hands back (a compiled model): a SHA-256, whose collisions cannot
// be crafted, of the format and each part, length-prefixed.
TEST_F(CompileCacheTest, TheKeyIsASha256OfTheLengthPrefixedParts) {
  const std::string key = CompileCache::Key({"ab", "c"});
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, Sha256Hex("aoti_harness.compile_cache/1\n2:ab\n1:c"));
}

TEST_F(CompileCacheTest, ACorruptEntryIsAMissAndIsRemoved) {
  const std::string key = CompileCache::Key({"x"});
  CompileCache cache({dir_});
  cache.Store(key, Answer("done"), Archive("a.pt2", 10));
  const std::string entry = dir_ + "/" + key.substr(0, 2) + "/" + key;
  WriteTextFile(entry + "/result.json", "{not json");
  EXPECT_FALSE(cache.Lookup(key, tmp_ + "/out.pt2"));
  EXPECT_FALSE(fs::exists(entry));
  // And it can be stored again.
  cache.Store(key, Answer("done"), Archive("a.pt2", 10));
  EXPECT_TRUE(cache.Lookup(key, tmp_ + "/out.pt2"));
}

TEST_F(CompileCacheTest, TheLeastRecentlyUsedGoFirstPastTheCap) {
  CompileCache cache({dir_, /*max_bytes=*/2500});
  const std::string a = CompileCache::Key({"a"}), b = CompileCache::Key({"b"}), c = CompileCache::Key({"c"});
  cache.Store(a, Answer("done"), Archive("a.pt2", 1000));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  cache.Store(b, Answer("done"), Archive("b.pt2", 1000));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(cache.Lookup(a, tmp_ + "/out.pt2"));  // a is now the more recently used
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  cache.Store(c, Answer("done"), Archive("c.pt2", 1000));  // 3000+ bytes: one must go
  EXPECT_TRUE(cache.Lookup(a, tmp_ + "/out.pt2"));
  EXPECT_FALSE(cache.Lookup(b, tmp_ + "/out.pt2")) << "b was the least recently used";
  EXPECT_TRUE(cache.Lookup(c, tmp_ + "/out.pt2"));
}

TEST_F(CompileCacheTest, EvictionLeavesThePrecompiledHeadersAlone) {
  // The compile servers keep inductor's precompiled headers beside the entries; they are
  // not entries, and eviction neither counts nor removes them.
  CompileCacheOptions options{dir_, /*max_bytes=*/1500};
  const std::string headers = PrecompiledHeadersDir(options);
  EXPECT_EQ(headers, dir_ + "/precompiled_headers");
  fs::create_directories(headers + "/locks");
  WriteTextFile(headers + "/c.h.gch", std::string(5000, 'x'));
  CompileCache cache(options);
  const std::string a = CompileCache::Key({"a"});
  cache.Store(a, Answer("done"), Archive("a.pt2", 1000));
  EXPECT_TRUE(cache.Lookup(a, tmp_ + "/out.pt2")) << "the headers' 5000 bytes were counted against the cap";
  EXPECT_TRUE(fs::exists(headers + "/c.h.gch"));
  EXPECT_TRUE(fs::exists(headers + "/locks"));
  EXPECT_EQ(PrecompiledHeadersDir(CompileCacheOptions{"", 0}), "");
}

// A hit comes with its archive: an entry whose archive another run removed meanwhile is a
// miss, not a "compiled" answer with nothing to run.
TEST_F(CompileCacheTest, AHitAlwaysComesWithItsArchive) {
  const std::string key = CompileCache::Key({"x"});
  CompileCache cache({dir_});
  cache.Store(key, Answer("done"), Archive("a.pt2", 10));
  const std::string entry = dir_ + "/" + key.substr(0, 2) + "/" + key;
  fs::remove(entry + "/archive.pt2");
  EXPECT_FALSE(cache.Lookup(key, tmp_ + "/out.pt2"));
  EXPECT_FALSE(fs::exists(tmp_ + "/out.pt2"));
}

// Two processes on one cache, one storing and evicting without pause (a cap of two
// entries), the other looking up: every hit the second gets has its whole archive.
TEST_F(CompileCacheTest, TwoProcessesHammeringOneCacheNeverSeeAHalfEntry) {
  constexpr int kKeys = 8, kRounds = 2000;
  const std::string archive = Archive("a.pt2", 4096);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    CompileCache writer({dir_, /*max_bytes=*/2 * 4096 + 1000});
    for (int i = 0; i < kRounds; ++i) writer.Store(CompileCache::Key({std::to_string(i % kKeys)}), Answer("done"), archive);
    ::_exit(0);
  }
  CompileCache reader({dir_, /*max_bytes=*/0});
  int hits = 0, bad = 0, lookups = 0, status = 0;
  // Looking up for as long as the writer writes.
  for (int i = 0; ::waitpid(child, &status, WNOHANG) == 0; ++i) {
    ++lookups;
    const std::string out = tmp_ + "/out.pt2";
    fs::remove(out);
    if (auto hit = reader.Lookup(CompileCache::Key({std::to_string(i % kKeys)}), out)) {
      ++hits;
      std::error_code ec;
      if (hit->out != out || fs::file_size(out, ec) != 4096 || ec) ++bad;
    }
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_GT(hits, 0) << "the reader never met an entry: the test tested nothing";
  EXPECT_EQ(bad, 0) << "hits without their whole archive, of " << hits;
  std::cout << "[aoti] two processes: " << hits << " hits of " << lookups << " lookups, " << bad << " bad\n";
}

// What killed runs leave behind (an entry half written, one half removed) goes once an
// hour old; a run's entry in the making does not.
TEST_F(CompileCacheTest, KilledRunsLeftoversAreCleanedUp) {
  CompileCache cache({dir_});
  for (const char* name : {".tmp_1_2", ".evict_3_4", ".tmp_5_6"}) {
    fs::create_directories(dir_ + "/" + name);
    WriteTextFile(dir_ + "/" + name + "/archive.pt2", std::string(100, 'x'));
  }
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(2);
  fs::last_write_time(dir_ + "/.tmp_1_2", old);
  fs::last_write_time(dir_ + "/.evict_3_4", old);
  cache.Evict();
  EXPECT_FALSE(fs::exists(dir_ + "/.tmp_1_2"));
  EXPECT_FALSE(fs::exists(dir_ + "/.evict_3_4"));
  EXPECT_TRUE(fs::exists(dir_ + "/.tmp_5_6")) << "a live run's entry in the making was removed";
  EXPECT_EQ(cache.leftovers_removed(), 2);
}

TEST_F(CompileCacheTest, ACacheThatCannotBeCreatedTurnsItselfOff) {
  WriteTextFile(tmp_ + "/file", "");
  CompileCache cache({tmp_ + "/file/cache"});
  EXPECT_FALSE(cache.enabled());
  cache.Store(CompileCache::Key({"a"}), Answer("done"), "");
  EXPECT_FALSE(cache.Lookup(CompileCache::Key({"a"}), tmp_ + "/out.pt2"));
}

TEST_F(CompileCacheTest, DefaultDirFollowsTheEnvironment) {
  ::setenv("AOTI_COMPILE_CACHE_DIR", "/x/y", 1);
  EXPECT_EQ(CompileCache::DefaultDir(), "/x/y");
  ::unsetenv("AOTI_COMPILE_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(CompileCache::DefaultDir(), "/xdg/aoti_harness/compile_cache");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(CompileCache::DefaultDir(), "/home/u/.cache/aoti_harness/compile_cache");
}

// Under bazel test HOME is unset (Bazel up to 6) or the test's own temporary directory
// (Bazel 7 and later): the default must outlive the test, so that a second run is warm.
TEST_F(CompileCacheTest, UnderBazelTestTheDefaultOutlivesTheTest) {
  const char* test_tmpdir = std::getenv("TEST_TMPDIR");
  if (!test_tmpdir) GTEST_SKIP() << "not run by bazel test";
  ::unsetenv("AOTI_COMPILE_CACHE_DIR");
  ::unsetenv("XDG_CACHE_HOME");
  for (const std::string home : {std::string(), std::string(test_tmpdir)}) {
    if (home.empty()) {
      ::unsetenv("HOME");
    } else {
      ::setenv("HOME", home.c_str(), 1);
    }
    std::string why;
    const std::string dir = CompileCache::DefaultDir(&why);
    SCOPED_TRACE("HOME=" + home + ": " + dir + " (" + why + ")");
    ASSERT_FALSE(dir.empty()) << why;
    EXPECT_NE(dir.rfind(test_tmpdir, 0), 0u) << "a cache in the test's temporary directory dies with the test";
    const std::string uid = std::to_string(::getuid());
    EXPECT_TRUE(dir == "/tmp/aoti_harness-" + uid + "/compile_cache" || dir.find("/.cache/aoti_harness/compile_cache") != std::string::npos);
    EXPECT_FALSE(why.empty());
    struct stat st;
    if (dir.rfind("/tmp/", 0) == 0) {
      // This user's own: no one else may write or plant entries there.
      ASSERT_EQ(::lstat(("/tmp/aoti_harness-" + uid).c_str(), &st), 0);
      EXPECT_EQ(st.st_uid, ::getuid());
      EXPECT_EQ(st.st_mode & 022, 0u);
    }
  }
}

// A local port: listening but never answering (a hung server), or closed (a server down).
class LocalPort {
 public:
  explicit LocalPort(bool listening) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t n = sizeof(a);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), n);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &n);
    port_ = ntohs(a.sin_port);
    if (listening) {
      ::listen(fd_, 16);  // the kernel completes connections; nobody reads them
    } else {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~LocalPort() {
    if (fd_ >= 0) ::close(fd_);
  }
  std::string url() const { return "grpc://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1, port_ = 0;
};

class RemoteCompileCacheTest : public CompileCacheTest {
 protected:
  // A publishing machine (upload on) unless said otherwise.
  CompileCacheOptions WithRemote(const std::string& url, bool upload = true) {
    CompileCacheOptions o{dir_};
    o.remote.url = url;
    o.remote.timeout_s = 1.0;
    o.remote.upload = upload;
    o.remote.python = FLAGS_remote_client_python;
    o.remote.script = FLAGS_remote_client_script;
    return o;
  }
  // The same server from another machine: a compile cache directory of its own.
  CompileCacheOptions AnotherMachine(const std::string& url) {
    CompileCacheOptions o = WithRemote(url);
    o.dir = tmp_ + "/another_machine";
    return o;
  }
  // A compile stored and looked up through a broken remote cache: the local cache works
  // as without one, the remote one is asked once, then left with its problem named.
  void ExpectLocalCacheUnharmed(CompileCache& cache, const std::string& problem) {
    const std::string key = CompileCache::Key({"relu"});
    EXPECT_FALSE(cache.Lookup(key, tmp_ + "/out.pt2"));
    EXPECT_THAT(cache.remote_problem(), ::testing::HasSubstr(problem));
    EXPECT_EQ(cache.remote_misses(), 0);
    cache.Store(key, Answer("compile"), Archive("compiled.pt2", 100));
    EXPECT_EQ(cache.stores(), 1);
    EXPECT_EQ(cache.remote_stores(), 0);
    const auto hit = cache.Lookup(key, tmp_ + "/out.pt2");
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->phase, "compile");
    EXPECT_EQ(ReadTextFile(tmp_ + "/out.pt2"), std::string(100, 'x'));
    EXPECT_FALSE(cache.Lookup(CompileCache::Key({"other"}), tmp_ + "/o.pt2"));
    EXPECT_EQ(cache.remote_hits() + cache.remote_misses(), 0);  // not asked again
  }
};

// A Remote Execution API cache in memory (reducer/testdata/fake_remote_cache.py), its
// blobs garbled on the way back when asked.
class FakeRemoteCache {
 public:
  FakeRemoteCache(const std::string& dir, bool garble, const std::string& require_header = "") {
    const std::string port_file = dir + "/fake_remote_cache.port";
    Subprocess::Options o;
    o.argv = {FLAGS_remote_client_python, FLAGS_fake_remote_cache,
              fs::path(FLAGS_remote_client_script).parent_path().string(), port_file};
    if (garble) o.argv.push_back("--garble");
    if (!require_header.empty()) o.argv.insert(o.argv.end(), {"--require_header", require_header});
    o.env = ChildEnvironment({});
    o.stderr_fd = 2;
    process_ = std::make_unique<Subprocess>(o);
    for (int i = 0; i < 600 && !fs::exists(port_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    url_ = "grpc://127.0.0.1:" + ReadTextFile(port_file);
  }
  const std::string& url() const { return url_; }

 private:
  std::unique_ptr<Subprocess> process_;
  std::string url_;
};

TEST_F(RemoteCompileCacheTest, ACompileStoredOnOneMachineComesBackOnAnother) {
  FakeRemoteCache server(tmp_, /*garble=*/false);
  const std::string key = CompileCache::Key({"program", "relu"});
  CompileCache first(WithRemote(server.url()));
  first.Store(key, Answer("compile"), Archive("compiled.pt2", 3 << 20));
  EXPECT_EQ(first.remote_stores(), 1);
  CompileCache second(AnotherMachine(server.url()));
  const auto hit = second.Lookup(key, tmp_ + "/out.pt2");
  ASSERT_TRUE(hit) << second.remote_problem();
  EXPECT_EQ(second.remote_hits(), 1);
  EXPECT_EQ(hit->phase, "compile");
  EXPECT_EQ(hit->message, Answer("compile").message);
  EXPECT_EQ(ReadTextFile(tmp_ + "/out.pt2"), std::string(3 << 20, 'x'));
  // Now a local entry: the server is not asked again for it.
  ASSERT_TRUE(second.Lookup(key, tmp_ + "/again.pt2"));
  EXPECT_EQ(second.remote_hits(), 1);
  EXPECT_EQ(second.hits(), 2);
  // What nobody compiled is a miss there too, and not a problem.
  EXPECT_FALSE(second.Lookup(CompileCache::Key({"other"}), tmp_ + "/o.pt2"));
  EXPECT_EQ(second.remote_misses(), 1);
  EXPECT_EQ(second.remote_problem(), "");
}

// An entry larger than the reader's cache keeps (--aoti_compile_cache_max_mb) is a miss:
// nothing of it is fetched, and the server stays in use.
TEST_F(RemoteCompileCacheTest, AnEntryLargerThanTheReaderKeepsIsNotFetched) {
  FakeRemoteCache server(tmp_, /*garble=*/false);
  const std::string key = CompileCache::Key({"program", "big"});
  CompileCache first(WithRemote(server.url()));
  first.Store(key, Answer("done"), Archive("compiled.pt2", 3 << 20));
  ASSERT_EQ(first.remote_stores(), 1) << first.remote_problem();
  CompileCacheOptions small = AnotherMachine(server.url());
  small.max_bytes = 1 << 20;
  CompileCache reader(small);
  EXPECT_FALSE(reader.Lookup(key, tmp_ + "/out.pt2"));
  EXPECT_EQ(reader.remote_misses(), 1);
  EXPECT_EQ(reader.remote_problem(), "");
  EXPECT_FALSE(fs::exists(small.dir + "/" + key.substr(0, 2) + "/" + key));
  EXPECT_FALSE(fs::exists(tmp_ + "/out.pt2"));
}

TEST_F(RemoteCompileCacheTest, AGarbledBlobIsAMissNeverAnEntry) {
  FakeRemoteCache server(tmp_, /*garble=*/true);
  const std::string key = CompileCache::Key({"program", "relu"});
  CompileCache first(WithRemote(server.url()));
  first.Store(key, Answer("done"), Archive("compiled.pt2", 100));
  EXPECT_EQ(first.remote_stores(), 1);
  CompileCache second(AnotherMachine(server.url()));
  EXPECT_FALSE(second.Lookup(key, tmp_ + "/out.pt2"));
  EXPECT_EQ(second.remote_hits(), 0);
  EXPECT_FALSE(fs::exists(tmp_ + "/another_machine/" + key.substr(0, 2) + "/" + key));
  // A server that corrupts what it keeps is not asked again.
  EXPECT_THAT(second.remote_problem(), ::testing::HasSubstr("does not match its digest"));
}

TEST_F(RemoteCompileCacheTest, AServerThatIsDownIsLeftAfterOneTry) {
  LocalPort down(/*listening=*/false);
  CompileCache cache(WithRemote(down.url()));
  ASSERT_TRUE(cache.remote_enabled());
  ExpectLocalCacheUnharmed(cache, "UNAVAILABLE");
}

TEST_F(RemoteCompileCacheTest, AServerThatNeverAnswersCostsOneTimeout) {
  LocalPort hung(/*listening=*/true);
  CompileCache cache(WithRemote(hung.url()));
  ExpectLocalCacheUnharmed(cache, "DEADLINE_EXCEEDED");
}

TEST_F(RemoteCompileCacheTest, AMissingClientIsNamed) {
  CompileCacheOptions o = WithRemote("grpc://127.0.0.1:1");
  o.remote.script = tmp_ + "/nowhere/remote_compile_cache.py";
  CompileCache cache(o);
  ExpectLocalCacheUnharmed(cache, "nowhere/remote_compile_cache.py is missing");
}

TEST_F(RemoteCompileCacheTest, TheFlagsAreChecked) {
  EXPECT_NO_THROW(CompileCacheOptionsFor("", 1, {"grpcs://cache.example:443"}));
  try {
    CompileCacheOptionsFor("", 1, {"http://cache.example"});
    ADD_FAILURE() << "an http URL was taken";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("--aoti_remote_cache=http://cache.example: expected grpc://"));
  }
  EXPECT_THROW(CompileCacheOptionsFor("", 1, {"grpc://h:1", "", 0}), HarnessError);
  RemoteCacheOptions tls;
  tls.url = "grpc://h:1";
  tls.tls_ca_cert = "/no/such/ca.pem";
  try {
    CompileCacheOptionsFor("", 1, tls);
    ADD_FAILURE() << "a missing CA file was taken";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("--aoti_remote_cache_ca_cert=/no/such/ca.pem: no such file"));
  }
  tls.tls_ca_cert = FLAGS_remote_client_script;  // a file that exists
  try {
    CompileCacheOptionsFor("", 1, tls);
    ADD_FAILURE() << "certificates over plain grpc:// were taken";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("expected grpcs://"));
  }
  tls.url = "grpcs://h:1";
  tls.tls_client_cert = FLAGS_remote_client_script;
  EXPECT_THROW(CompileCacheOptionsFor("", 1, tls), HarnessError) << "a client certificate without its key";
  // Credentials (a header file) only over TLS, or in the clear to this machine itself.
  RemoteCacheOptions token;
  token.header_file = FLAGS_remote_client_script;  // a file that exists
  for (const std::string url : {"grpcs://cache.example:443", "grpc://localhost:8980", "grpc://127.0.0.1:1", "grpc://[::1]:1"}) {
    token.url = url;
    EXPECT_NO_THROW(CompileCacheOptionsFor("", 1, token)) << url;
  }
  for (const std::string url : {"grpc://cache.example:8980", "grpc://10.0.0.7:1", "grpc://localhost.example.com:1"}) {
    token.url = url;
    try {
      CompileCacheOptionsFor("", 1, token);
      ADD_FAILURE() << "a header file over plain " << url << " was taken";
    } catch (const HarnessError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("would go in the clear over " + url + "; expected grpcs://"));
    }
  }
  // Without a local directory there is no remote cache either.
  CompileCacheOptions none = CompileCacheOptionsFor("none", 1, {"grpc://h:1"});
  EXPECT_FALSE(CompileCache(none).remote_enabled());
}

// Clients read only unless told to write: a reader's compiles stay on its machine.
TEST_F(RemoteCompileCacheTest, AReaderNeverUploads) {
  FakeRemoteCache server(tmp_, /*garble=*/false);
  const std::string key = CompileCache::Key({"program", "relu"});
  CompileCache reader(WithRemote(server.url(), /*upload=*/false));
  reader.Store(key, Answer("done"), Archive("compiled.pt2", 100));
  EXPECT_EQ(reader.stores(), 1);
  EXPECT_EQ(reader.remote_stores(), 0);
  CompileCache second(AnotherMachine(server.url()));
  EXPECT_FALSE(second.Lookup(key, tmp_ + "/out.pt2"));
  EXPECT_EQ(second.remote_misses(), 1);
}

// A header file (a bearer token) goes with every call; without it the server refuses.
TEST_F(RemoteCompileCacheTest, AHeaderFileGoesWithEveryCall) {
  FakeRemoteCache server(tmp_, /*garble=*/false, "Authorization:Bearer s3cret");
  const std::string key = CompileCache::Key({"program", "relu"});
  CompileCache anonymous(WithRemote(server.url()));
  EXPECT_FALSE(anonymous.Lookup(key, tmp_ + "/out.pt2"));
  EXPECT_THAT(anonymous.remote_problem(), ::testing::HasSubstr("UNAUTHENTICATED"));
  WriteTextFile(tmp_ + "/headers", "# the CI's token\nAuthorization: Bearer s3cret\n");
  CompileCacheOptions o = WithRemote(server.url());
  o.remote.header_file = tmp_ + "/headers";
  o.dir = tmp_ + "/with_token";
  CompileCache publisher(o);
  publisher.Store(key, Answer("done"), Archive("compiled.pt2", 100));
  EXPECT_EQ(publisher.remote_stores(), 1) << publisher.remote_problem();
  o.dir = tmp_ + "/another_machine";
  CompileCache reader(o);
  EXPECT_TRUE(reader.Lookup(key, tmp_ + "/out.pt2")) << reader.remote_problem();
  EXPECT_EQ(reader.remote_hits(), 1);
}

// A compile the machine ended (g++ killed for memory, a full disk) is not the compiler's
// verdict: kept neither here nor on the server, so the next run compiles it again.
TEST_F(RemoteCompileCacheTest, TheMachinesFailuresAreNeverKept) {
  FakeRemoteCache server(tmp_, /*garble=*/false);
  CompileResult killed = Answer("compile");
  killed.message = "g++: fatal error: Killed signal terminated program cc1plus\ncompilation terminated.";
  EXPECT_THAT(NotTheCompilersVerdict(killed), ::testing::HasSubstr("killed"));
  EXPECT_EQ(NotTheCompilersVerdict(Answer("compile")), "") << "a compile error is the compiler's verdict";
  CompileCache cache(WithRemote(server.url()));
  const std::string key = CompileCache::Key({"program", "big"});
  cache.Store(key, killed, Archive("failed.pt2", 100));
  EXPECT_EQ(cache.stores(), 0);
  EXPECT_EQ(cache.remote_stores(), 0);
  EXPECT_FALSE(cache.Lookup(key, tmp_ + "/out.pt2"));
  // A program this machine's server could not load is kept here, never sent to the fleet.
  cache.Store(CompileCache::Key({"program", "unloadable"}), Answer("load"), "");
  EXPECT_EQ(cache.stores(), 1);
  EXPECT_EQ(cache.remote_stores(), 0);
}

// A failed compile's entry says why and until when: once expired it is a miss, removed,
// and compiled again (a fix of the machine is not hidden for good, here or fleet-wide).
TEST_F(RemoteCompileCacheTest, AFailedCompilesEntryCarriesItsCauseAndExpires) {
  const std::string key = CompileCache::Key({"program", "relu"});
  {
    CompileCache cache(CompileCacheOptions{dir_});
    cache.Store(key, Answer("compile"), Archive("failed.pt2", 100));
    const auto j = nlohmann::json::parse(ReadTextFile(dir_ + "/" + key.substr(0, 2) + "/" + key + "/result.json"));
    EXPECT_EQ(j.at("cause").get<std::string>(), "compile: CppCompileError: k.cpp: In function 'void cpp_fused_relu_0(float*)':");
    EXPECT_GT(j.at("recorded").get<double>(), 0);
    EXPECT_FALSE(j.contains("expires")) << "how long a failure is believed is the reader's decision";
    EXPECT_TRUE(cache.Lookup(key, tmp_ + "/out.pt2")) << "a fresh failure is believed";
  }
  CompileCacheOptions expired{tmp_ + "/expired"};
  expired.remote.failure_ttl_s = -1;
  CompileCache cache(expired);
  cache.Store(key, Answer("compile"), Archive("failed.pt2", 100));
  cache.Store(CompileCache::Key({"program", "ok"}), Answer("done"), Archive("ok.pt2", 100));
  EXPECT_FALSE(cache.Lookup(key, tmp_ + "/out.pt2"));
  EXPECT_FALSE(fs::exists(tmp_ + "/expired/" + key.substr(0, 2) + "/" + key)) << "an expired entry is removed";
  EXPECT_TRUE(cache.Lookup(CompileCache::Key({"program", "ok"}), tmp_ + "/ok.pt2")) << "a success never expires";
}

// Expiry is judged by the reader: its own clock against the entry's recorded time, with its
// own time to live. A writer that records a failure far in the future (a clock ahead, or an
// entry written to live for ever) or says no time at all is not believed; one recorded a
// day ago is believed by a reader that keeps failures a week, and not by one that keeps
// them an hour.
TEST_F(RemoteCompileCacheTest, AFailuresExpiryIsTheReadersClockAgainstTheEntrysAge) {
  auto entry_with = [&](const std::string& name, const nlohmann::json& recorded) {
    const std::string key = CompileCache::Key({"program", name});
    CompileCache(CompileCacheOptions{dir_}).Store(key, Answer("compile"), Archive("failed.pt2", 100));
    const std::string result = dir_ + "/" + key.substr(0, 2) + "/" + key + "/result.json";
    auto j = nlohmann::json::parse(ReadTextFile(result));
    if (recorded.is_null()) {
      j.erase("recorded");
    } else {
      j["recorded"] = recorded;
    }
    WriteTextFile(result, j.dump());
    return key;
  };
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string day_old = entry_with("day_old", now - 24 * 3600);
  const std::string future = entry_with("future", now + 365 * 24 * 3600.0);
  const std::string untimed = entry_with("untimed", nullptr);
  CompileCacheOptions week{dir_};
  week.remote.failure_ttl_s = 7 * 24 * 3600.0;
  EXPECT_TRUE(CompileCache(week).Lookup(day_old, tmp_ + "/a.pt2")) << "a day old, kept a week: believed";
  EXPECT_FALSE(CompileCache(week).Lookup(future, tmp_ + "/b.pt2")) << "recorded a year ahead of the reader's clock";
  EXPECT_FALSE(CompileCache(week).Lookup(untimed, tmp_ + "/c.pt2")) << "a failure that does not say when";
  CompileCacheOptions hour{dir_};
  hour.remote.failure_ttl_s = 3600;
  EXPECT_FALSE(CompileCache(hour).Lookup(day_old, tmp_ + "/d.pt2")) << "a day old, kept an hour: expired";
}

}  // namespace
}  // namespace aoti
