#include "reducer/torch_bisect.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "harness/archive/tensor_bundle.h"
#include "harness/case/case_file.h"
#include "harness/util/errors.h"
#include "harness/util/json_util.h"
#include "harness/util/strings.h"
#include "harness/util/subprocess.h"

namespace aoti {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// The release's numbers: "2.15.0a0+git12" -> {2, 15, 0}.
std::vector<long> ReleaseNumbers(const std::string& v) {
  std::vector<long> out;
  size_t i = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
    size_t j = i;
    while (j < v.size() && std::isdigit(static_cast<unsigned char>(v[j]))) ++j;
    out.push_back(std::stol(v.substr(i, j - i)));
    if (j >= v.size() || v[j] != '.') break;
    i = j + 1;
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string Tail(const std::string& s, size_t n) { return s.size() <= n ? s : "..." + s.substr(s.size() - n); }

std::string XmlEscape(const std::string& s) { return MarkupEscape(s, /*escape_newlines=*/true); }

// The lines repro.py said about its verdict ("repro.py: ..."), else the output's end.
std::string SaidByRepro(const std::string& output) {
  std::istringstream in(output);
  std::string line, said;
  while (std::getline(in, line)) {
    // Its first line names the torch, which the table already does; a line that says the
    // torch cannot run the repro is kept.
    if (StartsWith(line, "repro.py: ") &&
        (!StartsWith(line, "repro.py: torch ") || Contains(line, "cannot run this repro"))) {
      said += (said.empty() ? "" : "\n") + line.substr(10);
    }
  }
  return Tail(said.empty() ? output : said, 1500);
}

std::string TorchName(const TorchInstall& t) { return t.version.empty() ? t.python : t.version; }

std::string Cell(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return Tail(out, 300);
}

// Seconds as JUnit's schema takes them: at most three decimals.
std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", s);
  return buf;
}

std::string ValueText(const json& v) { return v.is_string() ? v.get<std::string>() : JsonText(v); }

constexpr char kSectionBegin[] = "<!-- aoti_reduce bisect-torch -->";
constexpr char kSectionEnd[] = "<!-- end of bisect-torch -->";

std::string ReportSection(const TorchBisect& b) {
  std::ostringstream md;
  md << kSectionBegin << "\n## Which torch broke it\n\n" << b.answer << "\n\n";
  md << "| torch | build | verdict | s | what repro.py said |\n| --- | --- | --- | ---: | --- |\n";
  for (size_t i = 0; i < b.runs.size(); ++i) {
    const TorchRun& r = b.runs[i];
    std::string mark;
    if (static_cast<int>(i) == b.newest_passing) mark = b.kind == "fix" ? " (newest that fails)" : " (newest that passes)";
    if (static_cast<int>(i) == b.oldest_failing) mark = b.kind == "fix" ? " (oldest that passes)" : " (oldest that fails)";
    std::string said = r.said;
    if (!r.unknown_configs.empty()) said = "has no inductor config " + Join(r.unknown_configs, ", ") + "; " + said;
    md << "| " << TorchName(r.torch) << mark << " | " << (r.torch.cuda.empty() ? "CPU" : "CUDA " + r.torch.cuda) << " | "
       << TorchVerdictName(r.verdict) << " | " << static_cast<long>(r.seconds) << " | " << Cell(said) << " |\n";
  }
  if (b.newest_passing >= 0 && b.oldest_failing >= 0) {
    const std::string a = TorchName(b.runs[b.newest_passing].torch), c = TorchName(b.runs[b.oldest_failing].torch);
    const json& changed = b.config_diff["changed"];
    const json& added = b.config_diff["added"];
    const json& removed = b.config_diff["removed"];
    md << "\nInductor's configuration, " << a << " against " << c << ": " << changed.size() << " defaults changed, "
       << added.size() << " keys added, " << removed.size() << " removed";
    if (!b.configs_named.empty()) {
      md << ". **The repro's configs (" << b.repro_configs_json << ") set " << Join(b.configs_named, ", ")
         << ", which differ between the two.**";
    } else {
      md << "; the repro's configs (" << b.repro_configs_json << ") set none of them.";
    }
    md << "\n\n";
    auto list = [&](const char* title, const json& keys, bool pair) {
      if (keys.empty()) return;
      md << title << ":\n\n";
      int shown = 0;
      for (auto it = keys.begin(); it != keys.end(); ++it) {
        if (++shown > 25) {
          md << "- ... and " << keys.size() - 25 << " more (summary.json: torch_bisect.config_diff)\n";
          break;
        }
        md << "- `" << it.key() << "`: "
           << (pair ? "`" + Tail(ValueText((*it)[0]), 120) + "` → `" + Tail(ValueText((*it)[1]), 120) + "`"
                    : "`" + Tail(ValueText(*it), 120) + "`")
           << "\n";
      }
      md << "\n";
    };
    list(("Defaults changed (" + a + " → " + c + ")").c_str(), changed, true);
    list(("Only in " + c).c_str(), added, false);
    list(("Only in " + a).c_str(), removed, false);
  }
  md << "Each torch's log: torch_bisect/<version>.log. Rerun: `bazel run @aoti_harness//plugin:aoti_reduce -- "
        "bisect-torch --case_dir=<this directory>`.\n"
     << kSectionEnd << "\n";
  return md.str();
}

std::string TestXml(const TorchBisect& b) {
  int failures = 0, skipped = 0;
  double total = 0;
  for (const TorchRun& r : b.runs) {
    failures += r.verdict == TorchVerdict::kReproduces || r.verdict == TorchVerdict::kFailsDifferently;
    skipped += r.verdict == TorchVerdict::kCannotRun;
    total += r.seconds;
  }
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"" << b.runs.size() << "\" failures=\"" << failures
    << "\" errors=\"0\" time=\"" << Seconds(total) << "\" name=\"torch_bisect\">\n";
  x << "  <testsuite name=\"torch_bisect\" tests=\"" << b.runs.size() << "\" failures=\"" << failures
    << "\" errors=\"0\" skipped=\"" << skipped << "\" time=\"" << Seconds(total) << "\">\n    <properties>\n";
  auto prop = [&](const std::string& name, const std::string& value) {
    x << "      <property name=\"" << name << "\" value=\"" << XmlEscape(value) << "\"/>\n";
  };
  prop("aoti_torch_bisect", b.answer);
  prop("aoti_torch_bisect_kind", b.kind);
  if (b.newest_passing >= 0) prop("aoti_torch_newest_passing", TorchName(b.runs[b.newest_passing].torch));
  if (b.oldest_failing >= 0) prop("aoti_torch_oldest_failing", TorchName(b.runs[b.oldest_failing].torch));
  if (!b.configs_named.empty()) prop("aoti_torch_configs_named", Join(b.configs_named, ","));
  x << "    </properties>\n";
  for (const TorchRun& r : b.runs) {
    x << "    <testcase classname=\"torch_bisect\" name=\"" << XmlEscape("torch " + TorchName(r.torch))
      << "\" time=\"" << Seconds(r.seconds) << "\">";
    if (r.verdict == TorchVerdict::kReproduces || r.verdict == TorchVerdict::kFailsDifferently) {
      x << "\n      <failure message=\"" << XmlEscape(std::string(TorchVerdictName(r.verdict)) + ": " + Tail(r.said, 400))
        << "\">" << XmlEscape(r.said) << "</failure>\n    ";
    } else if (r.verdict == TorchVerdict::kCannotRun) {
      x << "\n      <skipped message=\"" << XmlEscape("cannot run: " + Tail(r.said, 400)) << "\"/>\n    ";
    }
    x << "</testcase>\n";
  }
  x << "  </testsuite>\n</testsuites>\n";
  return x.str();
}

}  // namespace

const char* TorchVerdictName(TorchVerdict v) {
  switch (v) {
    case TorchVerdict::kReproduces: return "reproduces";
    case TorchVerdict::kPasses: return "passes";
    case TorchVerdict::kFailsDifferently: return "fails differently";
    case TorchVerdict::kCannotRun: return "cannot run";
  }
  return "?";
}

int CompareTorchVersions(const std::string& a, const std::string& b) {
  const std::vector<long> x = ReleaseNumbers(a), y = ReleaseNumbers(b);
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const long p = i < x.size() ? x[i] : 0, q = i < y.size() ? y[i] : 0;
    if (p != q) return p < q ? -1 : 1;
  }
  return a.compare(b) < 0 ? -1 : a.compare(b) > 0 ? 1 : 0;
}

std::vector<std::string> InstalledTorchPythons(const std::string& cache_dir, const std::string& setup_python) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!cache_dir.empty() && fs::is_directory(cache_dir, ec)) {
    for (const auto& entry : fs::directory_iterator(cache_dir, ec)) {
      const std::string name = entry.path().filename().string();
      const fs::path python = entry.path() / "bin" / "python";
      if (StartsWith(name, "torch-") && ::access(python.c_str(), X_OK) == 0) out.push_back(python.string());
    }
  }
  std::sort(out.begin(), out.end());
  if (!setup_python.empty() && ::access(setup_python.c_str(), X_OK) == 0 &&
      std::find(out.begin(), out.end(), setup_python) == out.end()) {
    out.push_back(setup_python);
  }
  return out;
}

TorchInstall ProbeTorch(const std::string& python, const std::string& probe_script) {
  TorchInstall t;
  t.python = python;
  std::string exe;
  try {
    exe = FindExecutable(python);
  } catch (const std::exception& e) {
    t.problem = e.what();
    return t;
  }
  int status = 0;
  std::string output;
  bool ended = false;
  try {
    ended = RunCaptured({exe, probe_script, "--config"}, ChildEnvironment({}), 300, &status, &output);
  } catch (const std::exception& e) {
    t.problem = e.what();
    return t;
  }
  if (!ended || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    t.problem = python + " cannot import torch (the probe " + (ended ? "failed" : "ran past 300 s") + "): " + Tail(output, 600);
    return t;
  }
  // The probe's answer is its last line that is a JSON object (a warning may come before).
  std::istringstream lines(output);
  std::string line, each;
  while (std::getline(lines, each)) {
    if (StartsWith(each, "{")) line = each;
  }
  try {
    const json j = json::parse(line);
    t.version = j.at("version").get<std::string>();
    t.git_version = j.value("git_version", "");
    t.cuda = j.at("cuda").is_string() ? j.at("cuda").get<std::string>() : "";
    t.inductor_config = j.value("inductor_config", json::object());
  } catch (const std::exception& e) {
    t.problem = "the probe of " + python + " printed no JSON (" + e.what() + "): " + Tail(output, 600);
  }
  return t;
}

void DecideBoundary(TorchBisect* b) {
  std::vector<int> judged;
  for (size_t i = 0; i < b->runs.size(); ++i) {
    const TorchVerdict v = b->runs[i].verdict;
    if (v == TorchVerdict::kPasses || v == TorchVerdict::kReproduces) judged.push_back(static_cast<int>(i));
  }
  auto name = [&](int i) { return TorchName(b->runs[i].torch); };
  int changes = 0;
  for (size_t k = 1; k < judged.size(); ++k) {
    if (b->runs[judged[k]].verdict != b->runs[judged[k - 1]].verdict) {
      ++changes;
      b->newest_passing = judged[k - 1];  // the newest change wins
      b->oldest_failing = judged[k];
    }
  }
  b->monotonic = changes <= 1;
  const size_t n = b->runs.size();
  const std::string tried = std::to_string(n) + " torch" + (n == 1 ? "" : "es");
  if (judged.empty()) {
    b->kind = "unjudged";
    b->answer = "No torch of the " + tried + " could judge the repro (each cannot run it or fails differently): see the table.";
    return;
  }
  if (changes == 0) {
    const bool fails = b->runs[judged.front()].verdict == TorchVerdict::kReproduces;
    b->kind = fails ? "always" : "never";
    b->answer = fails ? "The failure reproduces under every torch that could judge it, from " + name(judged.front()) +
                            " to " + name(judged.back()) + ": it is older than every torch tried, not a regression among them."
                      : "The failure reproduces under none of the torches that could judge it (" + name(judged.front()) +
                            " to " + name(judged.back()) + "): it needs the torch the test ran with, or its environment.";
    return;
  }
  const bool regression = b->runs[b->oldest_failing].verdict == TorchVerdict::kReproduces;
  b->kind = regression ? "regression" : "fix";
  const std::string a = name(b->newest_passing), c = name(b->oldest_failing);
  b->answer = regression ? "Broken between torch " + a + " (the newest that passes) and " + c + " (the oldest that fails)."
                         : "Fixed between torch " + a + " (the newest that fails) and " + c + " (the oldest that passes).";
  if (!b->monotonic) {
    std::string seq;
    for (int i : judged) seq += (seq.empty() ? "" : ", ") + name(i) + " " + TorchVerdictName(b->runs[i].verdict);
    b->answer += " The verdict changes " + std::to_string(changes) + " times (" + seq + "); this is the newest change.";
  }
  // The configuration that differs between the two: their defaults, and the repro's own.
  // A key with a private part ("_cache_config_ignore_prefix", "a._b") is inductor's own
  // bookkeeping, no setting a user makes: left out.
  auto is_private = [](const std::string& key) { return StartsWith(key, "_") || Contains(key, "._"); };
  const json& p = b->runs[b->newest_passing].torch.inductor_config;
  const json& f = b->runs[b->oldest_failing].torch.inductor_config;
  json changed = json::object(), added = json::object(), removed = json::object();
  for (auto it = p.begin(); it != p.end(); ++it) {
    if (is_private(it.key())) continue;
    if (!f.contains(it.key())) {
      removed[it.key()] = *it;
    } else if (f[it.key()] != *it) {
      changed[it.key()] = json::array({*it, f[it.key()]});
    }
  }
  for (auto it = f.begin(); it != f.end(); ++it) {
    if (!p.contains(it.key()) && !is_private(it.key())) added[it.key()] = *it;
  }
  b->config_diff = {{"changed", changed}, {"added", added}, {"removed", removed}};
  json configs = json::object();
  try {
    configs = json::parse(b->repro_configs_json);
  } catch (const std::exception&) {
  }
  for (auto it = configs.begin(); it != configs.end(); ++it) {
    if (changed.contains(it.key()) || added.contains(it.key()) || removed.contains(it.key())) {
      b->configs_named.push_back(it.key());
    }
  }
  if (!b->configs_named.empty()) {
    b->answer += " The repro's configs set " + Join(b->configs_named, ", ") + ", which differ between the two.";
  } else if (!changed.empty()) {
    b->answer += " " + std::to_string(changed.size()) + " of inductor's defaults differ between the two (report.md).";
  }
}

TorchBisect BisectTorch(const std::string& repro_dir, const TorchBisectOptions& options,
                        const std::function<void(const std::string&)>& progress) {
  const std::string repro_py = repro_dir + "/repro.py";
  std::error_code ec;
  if (!fs::is_regular_file(repro_py, ec)) {
    throw HarnessError(repro_dir + " has no repro.py: give bisect-torch the repro directory the reducer wrote "
                       "(the test's <case>/repro, or aoti_reduce minify's --out)");
  }
  if (options.pythons.empty()) {
    throw HarnessError("no torch to try: give --torch_pythons=PY,PY,... (each a Python with torch), or make the matrix's "
                       "virtualenvs with tools/torch_matrix.sh");
  }
  TorchBisect b;
  if (fs::is_regular_file(repro_dir + "/case.json", ec)) {
    b.repro_configs_json = ParseCaseFile(ReadTextFile(repro_dir + "/case.json"), repro_dir).inductor_configs_json;
  }
  json repro_configs = json::object();
  try {
    repro_configs = json::parse(b.repro_configs_json);
  } catch (const std::exception&) {
  }
  for (const std::string& python : options.pythons) {
    progress("probing " + python);
    TorchRun r;
    r.torch = ProbeTorch(python, options.probe_script);
    b.runs.push_back(r);
  }
  std::stable_sort(b.runs.begin(), b.runs.end(), [](const TorchRun& x, const TorchRun& y) {
    if (x.torch.problem.empty() != y.torch.problem.empty()) return !x.torch.problem.empty();  // unprobed first
    return CompareTorchVersions(x.torch.version, y.torch.version) < 0;
  });
  const std::string logs = repro_dir + "/torch_bisect";
  fs::create_directories(logs, ec);
  std::vector<std::string> log_stems;
  for (size_t i = 0; i < b.runs.size(); ++i) {
    TorchRun& r = b.runs[i];
    if (!r.torch.problem.empty()) {
      r.verdict = TorchVerdict::kCannotRun;
      r.said = r.torch.problem;
      progress(r.torch.python + ": cannot run: " + Tail(r.said, 300));
      continue;
    }
    for (auto it = repro_configs.begin(); it != repro_configs.end(); ++it) {
      if (!StartsWith(it.key(), "aoti_harness.") && !r.torch.inductor_config.contains(it.key())) {
        r.unknown_configs.push_back(it.key());
      }
    }
    progress("torch " + r.torch.version + " (" + std::to_string(i + 1) + " of " + std::to_string(b.runs.size()) +
             "): python repro.py (one AOTI compile)");
    // Two Pythons of one release (a virtualenv and its copy) each keep their own log.
    std::string stem = r.torch.version;
    for (int k = 2; std::find(log_stems.begin(), log_stems.end(), stem) != log_stems.end(); ++k) {
      stem = r.torch.version + "-" + std::to_string(k);
    }
    log_stems.push_back(stem);
    r.log = logs + "/" + stem + ".log";
    const auto start = std::chrono::steady_clock::now();
    int status = 0;
    const bool ended = RunLogged({FindExecutable(r.torch.python), repro_py}, ChildEnvironment({}), r.log, options.timeout_s, &status);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string output;
    try {
      output = ReadTextFile(r.log);
    } catch (const std::exception&) {
    }
    r.said = SaidByRepro(output);
    if (!ended) {
      r.verdict = TorchVerdict::kCannotRun;
      r.said = "repro.py ran past " + std::to_string(static_cast<long>(options.timeout_s)) + " s";
    } else if (WIFSIGNALED(status)) {
      r.verdict = TorchVerdict::kCannotRun;
      r.said = "repro.py itself died of " + SignalName(WTERMSIG(status)) + ": " + r.said;
    } else {
      r.exit_code = WEXITSTATUS(status);
      r.verdict = r.exit_code == 1   ? TorchVerdict::kReproduces
                  : r.exit_code == 0 ? TorchVerdict::kPasses
                  : r.exit_code == 2 ? TorchVerdict::kFailsDifferently
                                     : TorchVerdict::kCannotRun;
    }
    progress("torch " + r.torch.version + ": " + TorchVerdictName(r.verdict) + " in " +
             std::to_string(static_cast<long>(r.seconds)) + " s");
  }
  DecideBoundary(&b);
  return b;
}

json TorchBisectJson(const TorchBisect& b) {
  json runs = json::array();
  for (const TorchRun& r : b.runs) {
    runs.push_back({{"torch", r.torch.version},
                    {"python", r.torch.python},
                    {"git_version", r.torch.git_version},
                    {"cuda", r.torch.cuda},
                    {"verdict", TorchVerdictName(r.verdict)},
                    {"exit_code", r.exit_code},
                    {"seconds", r.seconds},
                    {"said", r.said},
                    {"unknown_configs", r.unknown_configs},
                    {"log", r.log.empty() ? "" : "torch_bisect/" + fs::path(r.log).filename().string()}});
  }
  auto torch_at = [&](int i) { return i < 0 ? json(nullptr) : json(b.runs[i].torch.version); };
  // A regression's boundary is the newest torch that passes and the oldest that fails; a
  // fix's, the newest that fails and the oldest that passes.
  const bool fix = b.kind == "fix";
  return {{"answer", b.answer},
          {"kind", b.kind},
          {"monotonic", b.monotonic},
          {"newest_passing", fix ? json(nullptr) : torch_at(b.newest_passing)},
          {"oldest_failing", fix ? json(nullptr) : torch_at(b.oldest_failing)},
          {"newest_failing", fix ? torch_at(b.newest_passing) : json(nullptr)},
          {"oldest_passing", fix ? torch_at(b.oldest_failing) : json(nullptr)},
          {"configs_named", b.configs_named},
          {"config_diff", b.config_diff},
          {"runs", runs}};
}

void WriteTorchBisect(const TorchBisect& b, const std::string& repro_dir) {
  // report.md: the section replaced where an earlier bisect wrote one, else appended.
  std::string report;
  std::error_code ec;
  if (fs::is_regular_file(repro_dir + "/report.md", ec)) report = ReadTextFile(repro_dir + "/report.md");
  const size_t begin = report.find(kSectionBegin);
  if (begin != std::string::npos) {
    const size_t end = report.find(kSectionEnd, begin);
    report.erase(begin, end == std::string::npos ? std::string::npos : end + sizeof(kSectionEnd) - 1 - begin);
    while (!report.empty() && report.back() == '\n') report.pop_back();
    report += "\n";
  }
  if (report.empty()) report = "# aoti_harness repro\n";
  WriteTextFileAtomically(repro_dir + "/report.md", report + "\n" + ReportSection(b));
  // summary.json: its other keys kept.
  json summary = json::object();
  if (fs::is_regular_file(repro_dir + "/summary.json", ec)) {
    try {
      summary = json::parse(ReadTextFile(repro_dir + "/summary.json"));
    } catch (const std::exception& e) {
      throw HarnessError(repro_dir + "/summary.json is not JSON (" + e.what() + "); not overwriting it");
    }
  }
  summary["torch_bisect"] = TorchBisectJson(b);
  WriteTextFileAtomically(repro_dir + "/summary.json", JsonText(summary, 1) + "\n");
  WriteTextFileAtomically(repro_dir + "/test.xml", TestXml(b));
}

}  // namespace aoti
