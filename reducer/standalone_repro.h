// The torch-only repro, written and proven after every reduction. reducer/repro/standalone.py
// runs on the repro directory in a child (the test's Python and the environment every child
// gets): it writes repro_standalone.py (the minimal program as Python source, needing only
// torch) and upstream_issue.md (the issue for PyTorch's tracker), runs the file alone in an
// empty directory with nothing but torch importable, and records whether it reproduces
// (repro_standalone.json). That record is then written into the repro's summary.json
// ("standalone") and report.md, and returned for the test's properties and log.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/util/deadline.h"

namespace aoti {

struct StandaloneOptions {
  std::string python;  // the interpreter with torch (the compile server's)
  std::string script;  // reducer/repro/standalone.py; "": nothing is written (said in the record)
  // Run the file alone to prove it (one AOTI compile, about a minute here). false: written
  // only (seconds, no compile), and the record says it was not run.
  bool verify = true;
  // A directory kept across runs alone for what torch keeps between runs (standalone.py
  // --inductor-cache: inductor's cache and the temporary directory where it builds its
  // precompiled headers), so that those are built once rather than by every run (a run 50 s
  // -> 27 s here). Created when missing; emptied first when it holds more than
  // inductor_cache_max_bytes. "": both new for each run.
  std::string inductor_cache_dir;
  int64_t inductor_cache_max_bytes = int64_t{1} << 30;
  // PyTorch debug variables the test's runner kept (RunnerOptions::env_pass_through).
  std::vector<std::string> env_pass_through;
  // No child outlasts it; below min_verify_s left, the file is written without a run, and
  // below min_write_s nothing is started.
  Deadline deadline;
  double min_verify_s = 120;
  double min_write_s = 20;
  double max_seconds = 900;  // the most the whole step may take, deadline or not
};

struct StandaloneRecord {
  bool written = false;     // repro_standalone.py holds the program as source
  bool ran = false;         // it was run alone
  bool reproduces = false;  // and exited 1: the failure reproduces with only torch
  bool issue_written = false;
  int lines = 0;
  int runs = 0;             // 2 where values drawn from a seed did not reproduce and exact ones were tried
  double seconds = 0;       // the runs alone
  std::string values;       // "seeded" or "exact"
  std::string verdict;      // what the file said it saw ("accuracy", "passes", ...)
  std::string why_not;      // why it could not be written as source (the file says so too)
  std::string problem;      // why it was not written or not run (no script, no time, a failed child)
};

// WriteStandaloneRepro: runs standalone.py on `repro_dir` (which it writes into) and
// returns its record, also written into the directory's summary.json and report.md.
// Never throws for what the child does: a child that fails, runs past its time or leaves no
// record gives a record whose `problem` says so.
StandaloneRecord WriteStandaloneRepro(const std::string& repro_dir, const StandaloneOptions& options);

// ReadStandaloneRecord: repro_standalone.json as standalone.py writes it; `problem` set
// when it is missing or unreadable.
StandaloneRecord ReadStandaloneRecord(const std::string& path);

// RecordStandaloneInRepro: summary.json's "standalone" object and report.md's section.
void RecordStandaloneInRepro(const std::string& repro_dir, const StandaloneRecord& record);

// StandaloneText: one line for the log, the annotation and test.xml:
// "reproduces with only torch (94 lines, 41.3 s)", "written, not run: ...", ...
std::string StandaloneText(const StandaloneRecord& record);

}  // namespace aoti
