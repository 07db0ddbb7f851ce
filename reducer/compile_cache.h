// CompileCache: compiled candidates on disk, kept across runs, so a re-run of the same
// reduction (in CI, on a laptop) compiles nothing it compiled before.
//
// An entry is keyed by a SHA-256 of everything a compile depends on: the candidate's
// canonical program text, its inputs' metadata (dtype, sizes, strides), the weights and
// constants it reads, the inductor configs, the torch version and the host's CPU ISA
// flags (Oracle::DiskKey puts them together). It holds the compile server's answer
// (result.json) and the archive it wrote (compiled model, or the recorded compile
// error), under <dir>/<k[0:2]>/<k>/. Entries are written aside and renamed into place,
// and removed by a rename aside first, so concurrent runs never see half an entry, and a
// hit always comes with its archive; each hit refreshes the entry's time, and the oldest
// entries go first when the cache passes its size cap. What killed runs leave behind
// (.tmp_*, .evict_*) is removed once an hour old.
//
// A result that is the machine's, not the compiler's (g++ killed for memory, a full disk:
// NotTheCompilersVerdict) is never kept. A failed compile's entry carries its cause and the
// time it was recorded; the reader believes it while its age, on the reader's own clock, is
// within the reader's failure_ttl_s: then it is a miss, compiled again and replaced.
//
// With a remote cache (RemoteCacheOptions: a Remote Execution API server, the one Bazel's
// --remote_cache uses), a local miss asks the server, and a hit there becomes a local
// entry; with upload on (the trusted jobs that publish), each new local entry that is the
// compiler's verdict (compiled, or a compile error) is uploaded (tools/remote_compile_cache.py: the key as
// an action, the entry's files as its outputs in the CAS, checked against their digests
// when read). The local directory stays the first place looked and the fallback: a
// server that fails, outlasts its timeout or gives a blob that does not match its digest
// is logged once and not asked again in this run, so it costs at most one timeout, and
// never a verdict.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reducer/compile_client.h"

namespace aoti {

struct RemoteCacheOptions {
  std::string url;            // grpc://HOST:PORT or grpcs://HOST:PORT; "" for none
  std::string instance_name;  // the server's instance ("" for the default one)
  double timeout_s = 10;      // each call to the server
  // Write too (--aoti_remote_cache_upload): for the trusted jobs that publish, as Bazel's
  // --remote_upload_local_results. Off: the cache is read, never written.
  bool upload = false;
  // TLS (grpcs://): a CA bundle to trust instead of the system's roots, a client
  // certificate and its key; a file of headers ("Name: value" lines, e.g. a bearer token)
  // sent with every call. "" for none.
  std::string tls_ca_cert, tls_client_cert, tls_client_key, header_file;
  // A failed compile's entry (a compile error the compiler gave) is believed while its age
  // (this reader's clock against its recorded time) is within this, then compiled again: a
  // fix elsewhere (a driver, a header) is not hidden for good, whatever the writer's clock.
  double failure_ttl_s = 7 * 24 * 3600.0;
  // The client: a Python with grpcio (the compile server's) and tools/remote_compile_cache.py.
  // Reduce sets both from its compile server when they are empty.
  std::string python, script;
};

struct CompileCacheOptions {
  std::string dir;                              // "" disables the cache
  int64_t max_bytes = int64_t{4} << 30;         // eviction beyond this
  RemoteCacheOptions remote;                    // needs the local directory (dir)
  std::string why;                              // where dir came from, or why there is none
};

// NotTheCompilersVerdict: why a compile's result says something about the machine, not the
// program ("" when it is the compiler's verdict): the compiler killed (out of memory), a
// full disk, an allocation that failed. Such a result is never kept, here or on a server.
std::string NotTheCompilersVerdict(const CompileResult& result);

// CompileCacheOptionsFor: a --aoti_compile_cache_dir value ("" for the default, "none"
// for no cache) and a size cap in MiB, and the remote cache's --aoti_remote_cache URL,
// instance and timeout. Throws HarnessError naming the flag for a URL that is not
// grpc:// or grpcs://, or a timeout that is not positive.
CompileCacheOptions CompileCacheOptionsFor(const std::string& dir_flag, int64_t max_mb,
                                           const RemoteCacheOptions& remote = {});

// PrecompiledHeadersDir: where compile servers keep inductor's precompiled headers across
// runs, <dir>/precompiled_headers ("" when the cache is off). Inductor builds them on a
// server's first compile (two headers of about 140 MB, 13 s here) and keys them by
// compiler, flags and preprocessed text itself; they stay outside the size cap.
std::string PrecompiledHeadersDir(const CompileCacheOptions& options);

class CompileCache {
 public:
  explicit CompileCache(CompileCacheOptions options);

  // DefaultDir: $AOTI_COMPILE_CACHE_DIR, else $XDG_CACHE_HOME/aoti_harness/compile_cache,
  // else ~/.cache/aoti_harness/compile_cache. Under bazel test (HOME unset, or the test's
  // own temporary directory), the user's home's ~/.cache/aoti_harness/compile_cache when
  // the test may write there, else /tmp/aoti_harness-<uid>/compile_cache when that is this
  // user's own (0700, owned, no one else can write), else "" (no cache). `why`, when given,
  // says which and, for "", what to pass.
  static std::string DefaultDir(std::string* why = nullptr);
  // Key: the SHA-256 (hex) of the parts, each length-prefixed.
  static std::string Key(const std::vector<std::string>& parts);

  bool enabled() const { return !options_.dir.empty(); }
  const std::string& dir() const { return options_.dir; }

  // Lookup: on a hit, copies the entry's archive to `out` and returns the answer with
  // `out` set to it; nullopt on a miss or an unreadable entry (which is removed).
  std::optional<CompileResult> Lookup(const std::string& key, const std::string& out);
  // Store keeps the answer and, when it exists, the archive. Never throws: a cache that
  // cannot be written is logged and skipped.
  void Store(const std::string& key, const CompileResult& result, const std::string& archive);
  // Evict removes killed runs' leftovers an hour old, then the least recently used
  // entries until the cache fits its cap.
  void Evict();

  int hits() const { return hits_; }
  int misses() const { return misses_; }
  int stores() const { return stores_; }
  int leftovers_removed() const { return leftovers_removed_; }
  // The remote cache's figures: entries it gave (also counted in hits), local misses it
  // did not have, entries uploaded; its one problem, if it had one ("" otherwise).
  bool remote_enabled() const { return enabled() && !options_.remote.url.empty(); }
  const RemoteCacheOptions& remote() const { return options_.remote; }
  int remote_hits() const { return remote_hits_; }
  int remote_misses() const { return remote_misses_; }
  int remote_stores() const { return remote_stores_; }
  const std::string& remote_problem() const { return remote_problem_; }

 private:
  std::string EntryDir(const std::string& key) const;
  // Remove: an entry renamed aside (.evict_*), then deleted.
  void Remove(const std::string& entry) const;
  // TempPath: a fresh name under the cache directory (.tmp_<pid>_<random><suffix>).
  std::string TempPath(const std::string& suffix = "") const;
  // RemoteFetch: the server's entry for `key` made a local entry; false on a miss or a
  // problem. RemotePut uploads a local entry.
  bool RemoteFetch(const std::string& key);
  void RemotePut(const std::string& key, const std::string& entry);
  // RunRemote: tools/remote_compile_cache.py's exit status (0 done, 3 a miss); any other
  // outcome (a failed call, a timeout, a blob that does not match its digest) turns the
  // remote cache off for this run, with one warning. `bytes`: what the
  // call may move, for its time limit.
  int RunRemote(const std::vector<std::string>& args, int64_t bytes);

  CompileCacheOptions options_;
  int hits_ = 0, misses_ = 0, stores_ = 0, leftovers_removed_ = 0;
  int remote_hits_ = 0, remote_misses_ = 0, remote_stores_ = 0;
  std::string remote_problem_;
};

}  // namespace aoti
