// Which torch broke it: a repro run under each installed torch, oldest first, and the
// boundary between the torches where it passes and those where it fails, with the inductor
// configuration that differs between the two (defaults changed, keys added or removed, and
// which of those the repro's own configs name).
//
// Each torch is a Python with torch installed (a virtualenv's bin/python). It is probed
// first (tools/torch_probe.py: its version, build and inductor's default configuration),
// then runs the repro's own repro.py, which compiles repro.pt2 with that torch's AOTI under
// the test's configs and judges it by the test's rule: exit 1 reproduces, 0 passes, 2 fails
// otherwise (a torch that cannot load the program says so there).
//
// The answer is written into the repro directory: a section of report.md, "torch_bisect"
// in summary.json, and test.xml (JUnit: one test case per torch, failing where the repro
// reproduces), and each torch's log under torch_bisect/.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace aoti {

struct TorchInstall {
  std::string python;  // as given
  std::string version;  // "2.12.1+cu130"
  std::string git_version;
  std::string cuda;  // "" for a CPU build
  nlohmann::json inductor_config = nlohmann::json::object();  // key -> this torch's default
  std::string problem;  // not empty: it could not be probed (why)
};

enum class TorchVerdict { kReproduces, kPasses, kFailsDifferently, kCannotRun };
const char* TorchVerdictName(TorchVerdict v);

struct TorchRun {
  TorchInstall torch;
  TorchVerdict verdict = TorchVerdict::kCannotRun;
  int exit_code = -1;
  double seconds = 0;
  std::string said;  // repro.py's verdict lines (or why it did not run)
  std::string log;   // its whole output, in a file
  std::vector<std::string> unknown_configs;  // of the repro's configs, those this torch does not have
};

struct TorchBisect {
  std::vector<TorchRun> runs;  // oldest torch first
  // The boundary: two neighbouring judged torches (passes or reproduces) with different
  // verdicts, the newest such pair; -1 where there is none.
  int newest_passing = -1;
  int oldest_failing = -1;
  // "regression" (passes, then fails), "fix" (fails, then passes), "always" (reproduces
  // under every judged torch), "never" (under none), "unjudged" (no torch could judge).
  std::string kind;
  bool monotonic = true;  // at most one change of verdict along the judged torches
  std::string answer;     // one sentence
  // Between the two boundary torches: {"changed": {key: [passing's, failing's]}, "added":
  // {key: value} (in the failing torch only), "removed": {key: value}}.
  nlohmann::json config_diff = nlohmann::json::object();
  std::vector<std::string> configs_named;  // of the differing keys, those the repro's configs set
  std::string repro_configs_json = "{}";
};

struct TorchBisectOptions {
  std::vector<std::string> pythons;  // the torches to try (any order)
  std::string probe_script;          // tools/torch_probe.py
  double timeout_s = 1800;           // one repro.py run
};

// CompareTorchVersions: <0, 0, >0 as a is older, the same release, newer than b ("2.12.1",
// "2.13.0+cpu", "2.15.0a0"); the local part after '+' breaks ties only.
int CompareTorchVersions(const std::string& a, const std::string& b);

// InstalledTorchPythons: the torches this machine has: each `<cache>/torch-*/bin/python`
// (tools/torch_matrix.sh's virtualenvs) and `setup_python` (the set-up's), those that exist.
std::vector<std::string> InstalledTorchPythons(const std::string& cache_dir, const std::string& setup_python);

// ProbeTorch: what `python` is (never throws: a torch that cannot be probed has `problem`).
TorchInstall ProbeTorch(const std::string& python, const std::string& probe_script);

// DecideBoundary: fills newest_passing, oldest_failing, kind, monotonic and answer from
// `runs` (oldest first), and the config diff between the boundary's two torches.
void DecideBoundary(TorchBisect* bisect);

// BisectTorch: repro_dir's repro.py under each torch of options.pythons, oldest first.
// Throws HarnessError when repro_dir has no repro.py, or no torch is given (its case.json,
// where there is one, gives the repro's inductor configs).
TorchBisect BisectTorch(const std::string& repro_dir, const TorchBisectOptions& options,
                        const std::function<void(const std::string&)>& progress);

// WriteTorchBisect: report.md's section (replacing an earlier one), summary.json's
// "torch_bisect" (the file's other keys kept), test.xml, in repro_dir.
void WriteTorchBisect(const TorchBisect& bisect, const std::string& repro_dir);

// TorchBisectJson: summary.json's "torch_bisect".
nlohmann::json TorchBisectJson(const TorchBisect& bisect);

}  // namespace aoti
