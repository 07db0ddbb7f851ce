#include "reducer/compile_cache.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>

#include <glog/logging.h>
#include <nlohmann/json.hpp>

#include "harness/util/digest.h"
#include "harness/util/errors.h"
#include "harness/util/logging.h"
#include "harness/util/strings.h"
#include "harness/util/subprocess.h"
#include "harness/archive/tensor_bundle.h"

namespace aoti {
namespace fs = std::filesystem;

namespace {

constexpr char kFormat[] = "aoti_harness.compile_cache/1";

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// ToJson: the entry's result.json. A failed compile's also says why in one line (its
// cause) and when it was recorded (Unix seconds, the writer's clock). How long it is believed
// is the reader's decision (its failure_ttl_s against the entry's age, on its own clock), not
// the writer's: a writer cannot keep a failure alive in other readers' caches.
nlohmann::json ToJson(const CompileResult& r) {
  nlohmann::json j = {{"format", kFormat},        {"ok", r.ok},           {"phase", r.phase},
                      {"seconds", r.seconds},     {"error_type", r.error_type}, {"message", r.message},
                      {"compiler_errors", r.compiler_errors}, {"kernel_information", r.kernel_information}};
  if (!r.ok) {
    const std::string first = r.message.substr(0, r.message.find('\n')).substr(0, 300);
    j["cause"] = r.phase + (r.error_type.empty() ? "" : ": " + r.error_type) + (first.empty() ? "" : ": " + first);
    j["recorded"] = UnixNow();
  }
  return j;
}

// The most a writer's clock may run ahead of a reader's for its entries to be believed.
constexpr double kClockSkew = 3600;

// FailureBelieved: a failed compile's entry `j` is believed by a reader whose time to live
// for failures is ttl_s, judged on the reader's clock against the entry's recorded time.
bool FailureBelieved(const nlohmann::json& j, double ttl_s) {
  if (!j.contains("recorded") || !j.at("recorded").is_number()) return false;
  const double age = UnixNow() - j.at("recorded").get<double>();
  return age >= -kClockSkew && age <= ttl_s;
}

// EntryBytes: the size of an entry's files (what eviction counts, and an upload moves).
int64_t EntryBytes(const fs::path& entry) {
  int64_t bytes = 0;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(entry, ec)) {
    if (f.is_regular_file(ec)) bytes += static_cast<int64_t>(f.file_size(ec));
  }
  return bytes;
}

}  // namespace

std::string NotTheCompilersVerdict(const CompileResult& r) {
  if (r.ok) return "";
  static const char* const kMachine[][2] = {
      {"Killed signal terminated program", "the compiler was killed (out of memory, most likely)"},
      {"virtual memory exhausted", "the compiler ran out of memory"},
      {"out of memory", "out of memory"},
      {"Cannot allocate memory", "out of memory"},
      {"std::bad_alloc", "out of memory"},
      {"MemoryError", "out of memory"},
      {"No space left on device", "the disk is full"},
      {"Disk quota exceeded", "the disk quota is spent"},
      {"Resource temporarily unavailable", "the machine refused a process or thread"},
  };
  const std::string text = r.error_type + "\n" + r.message + "\n" + r.compiler_errors;
  for (const auto& m : kMachine) {
    if (text.find(m[0]) != std::string::npos) return std::string(m[1]) + " (\"" + m[0] + "\")";
  }
  return "";
}

CompileCache::CompileCache(CompileCacheOptions options) : options_(std::move(options)) {
  if (!enabled()) return;
  std::error_code ec;
  fs::create_directories(options_.dir, ec);
  if (ec) {
    LOG(WARNING) << "compile cache " << options_.dir << " cannot be created (" << ec.message()
                 << "); compiling without it";
    options_.dir.clear();
  }
}

namespace {

// LoopbackUrl: whether grpc://HOST:PORT names this machine (localhost, 127.0.0.0/8, [::1]).
bool LoopbackUrl(const std::string& url) {
  std::string host = url.substr(url.find("://") + 3);
  if (StartsWith(host, "[")) return StartsWith(host, "[::1]");
  host = host.substr(0, host.find_first_of(":/"));
  return host == "localhost" || StartsWith(host, "127.");
}

}  // namespace

CompileCacheOptions CompileCacheOptionsFor(const std::string& dir_flag, int64_t max_mb,
                                           const RemoteCacheOptions& remote) {
  CompileCacheOptions o;
  if (dir_flag == "none") {
    o.why = "--aoti_compile_cache_dir=none";
  } else if (dir_flag.empty()) {
    o.dir = CompileCache::DefaultDir(&o.why);
  } else {
    o.dir = dir_flag, o.why = "--aoti_compile_cache_dir";
  }
  o.max_bytes = max_mb * (int64_t{1} << 20);
  o.remote = remote;
  if (!remote.url.empty() && !StartsWith(remote.url, "grpc://") && !StartsWith(remote.url, "grpcs://")) {
    throw HarnessError("--aoti_remote_cache=" + remote.url + ": expected grpc://HOST:PORT or grpcs://HOST:PORT");
  }
  for (const auto& [flag, path] : {std::pair<const char*, const std::string*>{"--aoti_remote_cache_ca_cert", &remote.tls_ca_cert},
                                   {"--aoti_remote_cache_client_cert", &remote.tls_client_cert},
                                   {"--aoti_remote_cache_client_key", &remote.tls_client_key},
                                   {"--aoti_remote_cache_header_file", &remote.header_file}}) {
    std::error_code ec;
    if (!path->empty() && !fs::is_regular_file(*path, ec)) {
      throw HarnessError(std::string(flag) + "=" + *path + ": no such file (expected a readable file)");
    }
  }
  if (!remote.tls_client_cert.empty() != !remote.tls_client_key.empty()) {
    throw HarnessError("--aoti_remote_cache_client_cert and --aoti_remote_cache_client_key go together: give both");
  }
  if ((!remote.tls_ca_cert.empty() || !remote.tls_client_cert.empty()) && !StartsWith(remote.url, "grpcs://")) {
    throw HarnessError("--aoti_remote_cache=" + remote.url + ": certificates are given, so expected grpcs://HOST:PORT");
  }
  // A header file holds credentials (a bearer token): sent in the clear over grpc:// only to
  // this machine itself, where no one on the network reads it.
  if (!remote.header_file.empty() && StartsWith(remote.url, "grpc://") && !LoopbackUrl(remote.url)) {
    throw HarnessError("--aoti_remote_cache_header_file=" + remote.header_file + ": its headers (credentials, such as "
                       "a bearer token) would go in the clear over " + remote.url +
                       "; expected grpcs://HOST:PORT (TLS), or grpc:// to this machine (localhost, 127.0.0.1, [::1])");
  }
  if (!(remote.timeout_s > 0)) {
    throw HarnessError("--aoti_remote_cache_timeout_s=" + std::to_string(remote.timeout_s) +
                       ": expected a number of seconds above 0");
  }
  return o;
}

std::string PrecompiledHeadersDir(const CompileCacheOptions& options) {
  return options.dir.empty() ? "" : options.dir + "/precompiled_headers";
}

namespace {

// Writable: `dir` exists or can be made, and a file can be created in it (Bazel's sandbox
// shows the rest of the file system read-only).
bool Writable(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return false;
  const std::string probe = dir + "/.probe." + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (fd < 0) return false;
  ::close(fd);
  ::unlink(probe.c_str());
  return true;
}

// PrivateDirectory: `dir` made (0700) or found as this user's own: a directory, not a
// link, owned by this user, writable by no one else. A shared /tmp is anyone's: a cache
// there that another user made or can write could hand this test another program.
bool PrivateDirectory(const std::string& dir, std::string* why) {
  ::mkdir(dir.c_str(), 0700);
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) return *why = dir + " cannot be made", false;
  if (!S_ISDIR(st.st_mode)) return *why = dir + " is not a directory (a link?)", false;
  if (st.st_uid != ::getuid()) return *why = dir + " belongs to another user", false;
  if (st.st_mode & 022) return *why = dir + " is writable by others", false;
  return true;
}

}  // namespace

std::string CompileCache::DefaultDir(std::string* why) {
  std::string note;
  if (!why) why = &note;
  if (const char* d = std::getenv("AOTI_COMPILE_CACHE_DIR"); d && *d) return *why = "AOTI_COMPILE_CACHE_DIR", d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    *why = "XDG_CACHE_HOME";
    return std::string(x) + "/aoti_harness/compile_cache";
  }
  const char* test_tmpdir = std::getenv("TEST_TMPDIR");
  const char* h = std::getenv("HOME");
  const bool under_bazel_test = test_tmpdir && *test_tmpdir;
  // Under bazel test HOME is unset, or the test's own temporary directory (Bazel 7 and
  // later): a cache there dies with the test, so it is not the default.
  if (h && *h && h[0] == '/' && !(under_bazel_test && StartsWith(std::string(h) + "/", std::string(test_tmpdir) + "/"))) {
    *why = "HOME";
    return std::string(h) + "/.cache/aoti_harness/compile_cache";
  }
  if (!under_bazel_test) return *why = "no HOME", "";
  // The user's own cache, as aoti_reduce uses it outside Bazel: writable when the test
  // runs unsandboxed or was given --sandbox_writable_path.
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir && pw->pw_dir[0] == '/') {
    const std::string home_cache = std::string(pw->pw_dir) + "/.cache/aoti_harness/compile_cache";
    if (Writable(home_cache)) return *why = "the user's home (bazel test's HOME is unset or the test's own)", home_cache;
  }
  // Else a directory of this user's own under /tmp, which Bazel's sandbox leaves writable
  // (up to Bazel 6; from Bazel 7 the sandbox gives each test a /tmp of its own).
  const std::string mine = "/tmp/aoti_harness-" + std::to_string(::getuid());
  std::string refused;
  if (PrivateDirectory(mine, &refused) && Writable(mine + "/compile_cache")) {
    return *why = "under bazel test, this user's own directory in /tmp (the home directory is read-only in "
                  "Bazel's sandbox)",
           mine + "/compile_cache";
  }
  *why = "under bazel test, no writable cache directory (" + (refused.empty() ? mine + " is read-only" : refused) +
         "): give one with --test_env=AOTI_COMPILE_CACHE_DIR=DIR --sandbox_writable_path=DIR";
  return "";
}

std::string CompileCache::Key(const std::vector<std::string>& parts) {
  std::string all = kFormat;
  for (const auto& p : parts) all += "\n" + std::to_string(p.size()) + ":" + p;
  return Sha256Hex(all);
}

std::string CompileCache::EntryDir(const std::string& key) const {
  return options_.dir + "/" + key.substr(0, 2) + "/" + key;
}

std::optional<CompileResult> CompileCache::Lookup(const std::string& key, const std::string& out) {
  if (!enabled()) return std::nullopt;
  const std::string entry = EntryDir(key);
  std::error_code ec;
  if (!fs::exists(entry + "/result.json", ec) && !RemoteFetch(key)) {
    ++misses_;
    return std::nullopt;
  }
  try {
    const auto j = nlohmann::json::parse(ReadTextFile(entry + "/result.json"));
    if (j.value("format", "") != kFormat) throw HarnessError("another format");
    // A failed compile is believed while its age, on this reader's clock, is within this
    // reader's failure_ttl_s; then it is compiled again. An entry recorded in the future (a
    // writer's clock ahead by more than kClockSkew), or one that does not say when, has no
    // age to judge, and is not believed either.
    if (!j.value("ok", true) && !FailureBelieved(j, options_.remote.failure_ttl_s)) {
      AOTI_VLOG(1) << "compile cache: " << key << " (" << j.value("cause", "a failed compile") << ") has expired";
      Remove(entry);
      ++misses_;
      return std::nullopt;
    }
    CompileResult r;
    r.ok = j.at("ok").get<bool>();
    r.phase = j.at("phase").get<std::string>();
    r.seconds = j.value("seconds", 0.0);
    r.error_type = j.value("error_type", "");
    r.message = j.value("message", "");
    r.compiler_errors = j.value("compiler_errors", "");
    r.kernel_information = j.value("kernel_information", "");
    // A compile (or a recorded compile error) left an archive: a hit needs it. An entry
    // another run is evicting at this moment may have lost it already: that is a miss.
    const bool needs_archive = r.phase == "done" || r.phase == "compile";
    std::error_code copy_ec;
    fs::copy_file(entry + "/archive.pt2", out, fs::copy_options::overwrite_existing, copy_ec);
    if (!copy_ec) {
      r.out = out;
    } else if (needs_archive) {
      ++misses_;
      return std::nullopt;
    }
    fs::last_write_time(entry, fs::file_time_type::clock::now(), ec);  // recently used
    ++hits_;
    return r;
  } catch (const std::exception& e) {
    // Unreadable as it stands (not gone: an entry evicted meanwhile is just a miss).
    if (fs::exists(entry + "/result.json", ec)) {
      LOG(WARNING) << "compile cache entry " << entry << " is unreadable (" << e.what() << "); removing it";
      Remove(entry);
    }
    ++misses_;
    return std::nullopt;
  }
}

void CompileCache::Store(const std::string& key, const CompileResult& result, const std::string& archive) {
  if (!enabled()) return;
  if (const std::string machine = NotTheCompilersVerdict(result); !machine.empty()) {
    LOG(WARNING) << "compile cache: not keeping " << key << ": " << machine
                 << "; a result of the machine, not of the program";
    return;
  }
  const std::string entry = EntryDir(key);
  std::error_code ec;
  if (fs::exists(entry, ec)) return;
  std::random_device rd;
  const std::string tmp = options_.dir + "/.tmp_" + std::to_string(::getpid()) + "_" + std::to_string(rd());
  try {
    fs::create_directories(tmp);
    if (!archive.empty() && fs::exists(archive)) fs::copy_file(archive, tmp + "/archive.pt2");
    WriteTextFile(tmp + "/result.json", ToJson(result).dump(1));
    fs::create_directories(fs::path(entry).parent_path());
    fs::rename(tmp, entry);  // another run may have stored it first: then this one goes
    ++stores_;
    // The fleet gets the compiler's verdicts only: a program compiled, or a compile error.
    // A program the server could not load (a module missing here) stays on this machine.
    if (result.phase == "done" || result.phase == "compile") RemotePut(key, entry);
  } catch (const std::exception& e) {
    if (!fs::exists(entry, ec)) {
      LOG(WARNING) << "compile cache: cannot store " << key << " (" << e.what() << ")";
    }
  }
  fs::remove_all(tmp, ec);
  Evict();
}

std::string CompileCache::TempPath(const std::string& suffix) const {
  std::random_device rd;
  return options_.dir + "/.tmp_" + std::to_string(::getpid()) + "_" + std::to_string(rd()) + suffix;
}

int CompileCache::RunRemote(const std::vector<std::string>& args, int64_t bytes) {
  const RemoteCacheOptions& r = options_.remote;
  std::vector<std::string> argv = {r.python, r.script, args.at(0), "--url", r.url, "--instance", r.instance_name,
                                   "--timeout", std::to_string(r.timeout_s)};
  for (const auto& [flag, value] : {std::pair<const char*, const std::string*>{"--ca_cert", &r.tls_ca_cert},
                                    {"--client_cert", &r.tls_client_cert},
                                    {"--client_key", &r.tls_client_key},
                                    {"--header_file", &r.header_file}}) {
    if (!value->empty()) argv.insert(argv.end(), {flag, *value});
  }
  argv.insert(argv.end(), args.begin() + 1, args.end());
  const std::string log = TempPath(".log");
  int status = 0;
  std::string problem;
  std::error_code ec;
  try {
    if (!fs::exists(r.script, ec)) throw HarnessError("its client " + r.script + " is missing");
    // A few calls each under the timeout, the blobs' at 20 MiB/s on top (as the client
    // gives its calls); the process itself gets them all and Python's start.
    const double limit_s = 4 * r.timeout_s + 30 + static_cast<double>(bytes) / (20 << 20);
    if (!RunLogged(argv, ChildEnvironment({}), log, limit_s, &status)) {
      problem = "its client outlasted " + std::to_string(static_cast<int>(limit_s)) + " s";
    } else if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3)) {
      fs::remove(log, ec);
      return WEXITSTATUS(status);
    } else {
      std::string text = ReadTextFile(log);
      while (!text.empty() && text.back() == '\n') text.pop_back();
      problem = text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
      if (problem.empty()) problem = "its client ended with status " + std::to_string(status);
    }
  } catch (const std::exception& e) {
    problem = e.what();
  }
  fs::remove(log, ec);
  remote_problem_ = problem;
  LOG(WARNING) << "remote compile cache: " << problem << "; going on with the local cache "
               << options_.dir << " alone for the rest of this run";
  return -1;
}

bool CompileCache::RemoteFetch(const std::string& key) {
  if (!remote_enabled() || !remote_problem_.empty()) return false;
  const std::string tmp = TempPath();
  // The entry's size is known only to the server: none larger than the cache keeps is fetched.
  const int64_t most = std::min<int64_t>(options_.max_bytes, int64_t{8} << 30);
  const int rc = RunRemote({"get", "--key", key, "--out", tmp, "--max_bytes", std::to_string(most)}, most);
  std::error_code ec;
  bool fetched = false;
  if (rc == 0) {
    fs::create_directories(fs::path(EntryDir(key)).parent_path(), ec);
    fs::rename(tmp, EntryDir(key), ec);  // a run that stored it meanwhile wins: same contents
    fetched = fs::exists(EntryDir(key) + "/result.json", ec);
    remote_hits_ += fetched;
  } else if (rc == 3) {
    ++remote_misses_;
  }
  fs::remove_all(tmp, ec);
  return fetched;
}

void CompileCache::RemotePut(const std::string& key, const std::string& entry) {
  // Read only unless told to write: only the trusted jobs that publish upload.
  if (!remote_enabled() || !remote_problem_.empty() || !options_.remote.upload) return;
  if (RunRemote({"put", "--key", key, "--dir", entry}, EntryBytes(entry)) == 0) ++remote_stores_;
}

void CompileCache::Remove(const std::string& entry) const {
  // Renamed aside first, in one step: another run's Lookup sees the whole entry or none.
  std::random_device rd;
  const std::string gone = options_.dir + "/.evict_" + std::to_string(::getpid()) + "_" + std::to_string(rd());
  std::error_code ec;
  fs::rename(entry, gone, ec);
  fs::remove_all(ec ? fs::path(entry) : fs::path(gone), ec);
}

void CompileCache::Evict() {
  if (!enabled()) return;
  std::error_code ec;
  // What killed runs left: entries half written (.tmp_*) and half removed (.evict_*), an
  // hour old or more (a live run finishes either in seconds).
  const auto stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const auto& e : fs::directory_iterator(options_.dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(".tmp_", 0) != 0 && name.rfind(".evict_", 0) != 0) continue;
    std::error_code tec;
    const auto when = fs::last_write_time(e.path(), tec);
    if (!tec && when < stale) {
      fs::remove_all(e.path(), tec);
      ++leftovers_removed_;
    }
  }
  if (options_.max_bytes <= 0) return;
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    int64_t bytes = 0;
  };
  std::vector<Entry> entries;
  int64_t total = 0;
  for (const auto& shard : fs::directory_iterator(options_.dir, ec)) {
    // Shards only (<k[0:2]>): not entries being written, nor the precompiled headers.
    if (!shard.is_directory(ec) || shard.path().filename().string().size() != 2) continue;
    for (const auto& e : fs::directory_iterator(shard.path(), ec)) {
      Entry entry{e.path(), fs::last_write_time(e.path(), ec), EntryBytes(e.path())};
      total += entry.bytes;
      entries.push_back(std::move(entry));
    }
  }
  if (total <= options_.max_bytes) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const auto& e : entries) {
    if (total <= options_.max_bytes) break;
    Remove(e.path.string());
    total -= e.bytes;
    AOTI_VLOG(1) << "compile cache: evicted " << e.path.string();
  }
}

}  // namespace aoti
