#include "reducer/standalone_repro.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <glog/logging.h>
#include <nlohmann/json.hpp>

#include "harness/archive/tensor_bundle.h"
#include "harness/util/errors.h"
#include "harness/util/json_util.h"
#include "harness/util/subprocess.h"
#include "harness/util/temp_dir.h"

namespace aoti {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kReportHeading[] = "## The torch-only repro (repro_standalone.py)";

std::string Fixed1(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", seconds);
  return buf;
}

std::string LastLines(const std::string& text, size_t max_chars) {
  return text.size() <= max_chars ? text : "..." + text.substr(text.size() - max_chars);
}

// ReportSection: report.md's section, in the words StandaloneText uses.
std::string ReportSection(const StandaloneRecord& r) {
  std::string md = std::string(kReportHeading) + "\n\n";
  if (!r.written) {
    md += "Not written as source: " + (r.why_not.empty() ? r.problem : r.why_not) +
          ". `python repro.py` (with `repro.pt2`) is the repro.\n";
    return md;
  }
  md += "`repro_standalone.py` (" + std::to_string(r.lines) +
        " lines) needs only torch: `python repro_standalone.py` exits 1 when the failure reproduces. ";
  if (r.ran) {
    md += r.reproduces ? "Run alone (an empty directory, only torch importable), it **reproduced** (" +
                             (r.verdict.empty() ? std::string("exit 1") : r.verdict) + ") in " + Fixed1(r.seconds) +
                             " s" + (r.runs > 1 ? " (" + std::to_string(r.runs) + " runs)" : "") + "."
                       : "Run alone, it **did not reproduce** (" + (r.verdict.empty() ? "no verdict" : r.verdict) +
                             "): file the issue with `repro.py` and `repro.pt2` instead.";
  } else {
    md += "Not run alone: " + r.problem + ".";
  }
  md += r.values == "seeded" ? " Tensors whose values do not matter are drawn from a seed." : "";
  md += r.issue_written ? "\n\n`upstream_issue.md` is the issue for PyTorch's tracker: the title, this script inline, "
                          "expected and observed, the environment (`torch.utils.collect_env`).\n"
                        : "\n";
  return md;
}

}  // namespace

StandaloneRecord ReadStandaloneRecord(const std::string& path) {
  StandaloneRecord r;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    r.problem = "standalone.py left no record (" + fs::path(path).filename().string() + ")";
    return r;
  }
  try {
    const json j = json::parse(ReadTextFile(path));
    if (!j.is_object()) throw HarnessError("expected a JSON object");
    r.written = j.value("written", false);
    r.runs = static_cast<int>(JsonInt(j.value("runs", json(0)), path + ": runs", 0, 1000));
    r.ran = r.runs > 0;
    r.reproduces = r.ran && j.value("reproduces", false);
    r.lines = static_cast<int>(JsonInt(j.value("lines", json(0)), path + ": lines", 0, 100000000));
    const json seconds = j.value("seconds", json(0.0));
    r.seconds = seconds.is_number() ? seconds.get<double>() : 0;
    r.values = j.value("values", "");
    r.why_not = j.value("why_not", "");
    const json verdict = j.value("verdict", json());
    r.verdict = verdict.is_string() ? verdict.get<std::string>() : "";
  } catch (const std::exception& e) {
    r = StandaloneRecord();
    r.problem = "its record " + path + " is not readable: " + e.what();
  }
  return r;
}

std::string StandaloneText(const StandaloneRecord& r) {
  if (!r.written) return "not written: " + (r.why_not.empty() ? r.problem : r.why_not);
  const std::string size = std::to_string(r.lines) + " lines";
  if (!r.ran) return "written (" + size + "), not run alone: " + r.problem;
  if (r.reproduces) return "reproduces with only torch (" + size + ", " + Fixed1(r.seconds) + " s)";
  return "does not reproduce alone (" + (r.verdict.empty() ? std::string("no verdict") : r.verdict) + "; " + size + ")";
}

void RecordStandaloneInRepro(const std::string& repro_dir, const StandaloneRecord& r) {
  const std::string summary_path = repro_dir + "/summary.json";
  json summary = json::object();
  std::error_code ec;
  if (fs::exists(summary_path, ec)) {
    summary = json::parse(ReadTextFile(summary_path));
    if (!summary.is_object()) throw HarnessError(summary_path + ": expected a JSON object");
  }
  json s = {{"written", r.written},   {"ran", r.ran},       {"reproduces", r.reproduces},
            {"lines", r.lines},       {"runs", r.runs},     {"seconds", r.seconds},
            {"values", r.values},     {"verdict", r.verdict}, {"issue_written", r.issue_written},
            {"text", StandaloneText(r)}};
  if (r.written) s["file"] = "repro_standalone.py";
  if (!r.why_not.empty()) s["why_not"] = r.why_not;
  if (!r.problem.empty()) s["problem"] = r.problem;
  summary["standalone"] = s;
  WriteTextFileAtomically(summary_path, JsonText(summary, 1) + "\n");
  const std::string report_path = repro_dir + "/report.md";
  std::string report = fs::exists(report_path, ec) ? ReadTextFile(report_path) : "";
  // A second run replaces its section rather than adding another.
  const size_t at = report.find(kReportHeading);
  if (at != std::string::npos) {
    const size_t next = report.find("\n## ", at + 1);
    report.erase(at, next == std::string::npos ? std::string::npos : next + 1 - at);
  }
  if (!report.empty() && report.back() != '\n') report += "\n";
  report += (report.empty() ? "" : "\n") + ReportSection(r);
  WriteTextFileAtomically(report_path, report);
}

namespace {

// KeepInductorCache: the run's kept inductor cache, made (or emptied, past its cap) here;
// false (a new one per run, and a warning) where it cannot be.
bool KeepInductorCache(const StandaloneOptions& options) {
  const fs::path dir(options.inductor_cache_dir);
  std::error_code ec;
  int64_t bytes = 0;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code fec;
    if (it->is_regular_file(fec)) bytes += static_cast<int64_t>(it->file_size(fec));
  }
  if (bytes > options.inductor_cache_max_bytes) {
    LOG(INFO) << "repro_standalone.py: emptying " << dir.string() << " (" << bytes / (1 << 20) << " MiB, over "
              << options.inductor_cache_max_bytes / (1 << 20) << " MiB)";
    fs::remove_all(dir, ec);
  }
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    LOG(WARNING) << "repro_standalone.py: its kept inductor cache " << dir.string() << " cannot be made ("
                 << (ec ? ec.message() : "not a directory") << "); the run gets a new one";
    return false;
  }
  return true;
}

}  // namespace

StandaloneRecord WriteStandaloneRepro(const std::string& repro_dir, const StandaloneOptions& options) {
  StandaloneRecord r;
  const std::string record_path = repro_dir + "/repro_standalone.json";
  std::error_code ec;
  fs::remove(record_path, ec);  // an earlier run's record says nothing of this one
  const double left = std::min(options.deadline.SecondsLeft(), options.max_seconds);
  if (options.script.empty() || options.python.empty()) {
    r.problem = "no standalone.py was given (--aoti_standalone_script, set by aoti_model_test)";
  } else if (left < options.min_write_s) {
    r.problem = "the test's time ran out (" + Fixed1(std::max(left, 0.0)) + " s left)";
  }
  if (!r.problem.empty()) {
    RecordStandaloneInRepro(repro_dir, r);
    return r;
  }
  const bool verify = options.verify && left >= options.min_verify_s;
  // The child's own limit, and standalone.py's for the run alone within it (its import,
  // the issue's collect_env and the writing around it).
  const double child_s = std::max(1.0, left - 5);
  std::vector<std::string> argv = {options.python, options.script, repro_dir, "--issue"};
  if (verify) argv.insert(argv.end(), {"--verify", "--timeout", Fixed1(std::max(10.0, child_s - 60))});
  if (verify && !options.inductor_cache_dir.empty() && KeepInductorCache(options)) {
    argv.insert(argv.end(), {"--inductor-cache", options.inductor_cache_dir});
  }
  TempDir tmp("aoti_standalone");
  const std::vector<std::string> env = ChildEnvironment({options.env_pass_through, {{"TMPDIR", tmp.path()}}});
  int status = 0;
  std::string output;
  const bool ended = RunCaptured(argv, env, child_s, &status, &output);
  if (!verify) {
    // standalone.py writes a record only when it runs the file; here what it printed says.
    r.written = ended && WIFEXITED(status) && WEXITSTATUS(status) == 0 && fs::exists(repro_dir + "/repro_standalone.py", ec);
    if (r.written) {
      const std::string text = ReadTextFile(repro_dir + "/repro_standalone.py");
      r.lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
      r.values = "exact";
      r.problem = options.verify ? "the test's time left (" + Fixed1(left) + " s) was too short to run it"
                                 : "not asked to (AOTI_REDUCE_STANDALONE_VERIFY=0, --noaoti_reduce_standalone_verify)";
    } else if (ended && WIFEXITED(status) && WEXITSTATUS(status) == 3) {
      const size_t why = output.find("cannot be written as source: ");
      r.why_not = why == std::string::npos ? LastLines(output, 400)
                                           : output.substr(why + 29, output.find('\n', why) - why - 29);
    }
  } else {
    r = ReadStandaloneRecord(record_path);
  }
  if (!ended) {
    r.problem = "standalone.py ran past " + Fixed1(child_s) + " s and was stopped";
  } else if (!r.written && r.why_not.empty() && r.problem.empty()) {
    r.problem = "standalone.py failed: " + LastLines(output, 600);
  } else if (r.written && r.problem.empty() && !r.ran) {
    r.problem = "standalone.py did not run it: " + LastLines(output, 600);
  }
  r.issue_written = r.written && fs::exists(repro_dir + "/upstream_issue.md", ec);
  if (!r.problem.empty() && !ended) LOG(WARNING) << "repro_standalone.py: " << r.problem;
  RecordStandaloneInRepro(repro_dir, r);
  return r;
}

}  // namespace aoti
