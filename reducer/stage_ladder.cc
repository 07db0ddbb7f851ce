#include "reducer/stage_ladder.h"

#include <chrono>
#include <functional>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "reducer/graph_edit.h"
#include "reducer/source_text.h"

namespace aoti {
namespace {

using nlohmann::json;

constexpr char kAtenFallbacks[] = "aoti_harness.aten_fallbacks";
constexpr char kSkipDecompositions[] = "aoti_harness.skip_decompositions";

// One config as the extra configs carry it: the value as its JSON text.
std::string Configs(const std::string& key, const json& value) { return json{{key, value.dump()}}.dump(); }

// A config value as a person writes it: the JSON text of a JSON-literal string parsed,
// any other string as it is.
json Typed(const json& v) {
  if (!v.is_string()) return v;
  const json parsed = json::parse(v.get<std::string>(), nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? v : parsed;
}

std::string Seconds(double s) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(s < 10 ? 2 : 1) << s << " s";
  return out.str();
}

// What a rung's verdict says: the repro passes, still fails the same way, or fails otherwise.
std::string VerdictText(const Verdict& v) {
  if (v.fails) return "fails the same way";
  if (v.failure_class.empty() && v.not_failing_reason == "passes") return "passes";
  return "does not pass: " + v.not_failing_reason.substr(0, 200);
}

bool Passes(const Verdict& v) { return !v.fails && v.failure_class.empty() && v.not_failing_reason == "passes"; }

// The switches PyTorch's CompilerBisector flips in inductor (torch/_inductor/compiler_bisector.py),
// with freezing flipped from what the package has: each, and the stage it names when it
// makes the repro pass.
struct Switch {
  std::string key;
  json value;
  std::string stage;
};

std::vector<Switch> Switches(const json& configs) {
  const json freezing = configs.contains("freezing") ? Typed(configs["freezing"]) : json(false);
  return {
      {"fallback_random", true, "lowering (random operators)"},
      {"emulate_precision_casts", true, "codegen (precision casts)"},
      {"layout_optimization", false, "scheduling and fusion (layout optimisation)"},
      {"comprehensive_padding", false, "scheduling and fusion (padding)"},
      {"freezing", !(freezing.is_boolean() && freezing.get<bool>()), "lowering (freezing passes)"},
  };
}

class Ladder {
 public:
  Ladder(Oracle& oracle, const std::function<bool()>& out_of_time, const std::function<void(const std::string&)>& progress,
         StageReport* report)
      : oracle_(oracle), out_of_time_(out_of_time), progress_(progress), r_(*report) {}

  // Run: one rung on the repro, within the ladder's budget; nullptr when the budget or the
  // time is spent (the report says so).
  const LadderRung* Run(const Program& repro, const std::string& name, const std::string& configs,
                        const std::string& what) {
    if (r_.ladder_compiles >= r_.ladder_budget || out_of_time_()) {
      if (!stopped_) progress_("  stage ladder: " + std::string(out_of_time_() ? "out of time" : "its budget is spent") +
                               " before '" + what + "'");
      stopped_ = true;
      return nullptr;
    }
    progress_("  stage ladder: the repro with " + what);
    LadderRung rung{name, configs, what};
    const int before = oracle_.compiles();
    const auto start = std::chrono::steady_clock::now();
    const Verdict v = oracle_.TestWithConfigs(repro, configs);
    rung.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rung.passes = Passes(v);
    rung.fails = v.fails;
    rung.verdict = VerdictText(v);
    if (v.not_failing_reason.find("no decomposition to leave out") != std::string::npos) {
      // Refused before any compile (tools/package_model.py checks the key first).
      rung.verdict = "not applicable: inductor has no decomposition of it";
    } else {
      r_.ladder_compiles += oracle_.compiles() - before;
    }
    progress_("  stage ladder: " + rung.verdict + " (" + Seconds(rung.seconds) + ")");
    r_.rungs.push_back(rung);
    return &r_.rungs.back();
  }

 private:
  Oracle& oracle_;
  const std::function<bool()>& out_of_time_;
  const std::function<void(const std::string&)>& progress_;
  StageReport& r_;
  bool stopped_ = false;
};

bool IsAten(const std::string& op) { return op.rfind("aten.", 0) == 0 || op.rfind("prims.", 0) == 0; }

// Candidate workarounds: (configs, what), narrowest first.
using Workarounds = std::vector<std::pair<std::string, std::string>>;

// BelowAtenFallback: the repro passes with the operator as an ATen kernel, so inductor's
// own code for it is at fault: the vectorised code (CPU), else its decomposition, else its
// lowering or codegen.
void BelowAtenFallback(Ladder& ladder, const Oracle& oracle, const Program& minimal, const json& op_list,
                       StageReport& r, Workarounds* workarounds) {
  r.stage = "decomposition, lowering or codegen";
  r.stage_reason = "the repro passes with " + r.culprit_op + " as an ATen kernel: inductor's own code for it is at fault";
  const LadderRung* scalar = nullptr;
  if (oracle.device() == "cpu") {
    scalar = ladder.Run(minimal, "vectorisation_off", Configs("cpp.simdlen", 1), "the CPU code not vectorised (cpp.simdlen=1)");
  }
  if (scalar && scalar->passes) {
    workarounds->push_back({scalar->configs_json, "the CPU code not vectorised"});
    r.stage = "codegen (vectorised)";
    r.stage_reason = "the repro passes with the CPU code not vectorised (cpp.simdlen=1), and with " + r.culprit_op +
                     " as an ATen kernel";
    return;
  }
  if (scalar && !scalar->fails) {
    r.stage_reason += "; '" + scalar->what + "' was inconclusive (" + scalar->verdict + ")";
    return;
  }
  const LadderRung* undecomposed =
      ladder.Run(minimal, "decomposition_off", Configs(kSkipDecompositions, op_list),
                 "inductor's decomposition of " + r.culprit_op + " left out (" + kSkipDecompositions + ")");
  if (!undecomposed) return;
  const bool none = undecomposed->verdict.rfind("not applicable", 0) == 0;
  if (undecomposed->passes) {
    r.stage = "decomposition";
    r.stage_reason = "the repro passes with inductor's decomposition of " + r.culprit_op + " left out";
  } else if (undecomposed->fails || none) {
    r.stage = std::string("lowering or codegen") + (scalar ? " (the scalar code too)" : "");
    r.stage_reason = "the repro passes with " + r.culprit_op + " as an ATen kernel" +
                     (scalar ? ", and fails with the code not vectorised" : std::string()) +
                     (none ? "; inductor has no decomposition of it" : ", and fails with its decomposition left out");
  } else {
    r.stage_reason += "; '" + undecomposed->what + "' was inconclusive (" + undecomposed->verdict + ")";
  }
}

// AroundAtenFallback: the operator as an ATen kernel fails too: inductor's switches
// around it, one at a time, until one makes the repro pass.
void AroundAtenFallback(Ladder& ladder, const json& package_configs, const Program& minimal, StageReport& r,
                        Workarounds* workarounds) {
  int tried = 0;
  const std::vector<Switch> switches = Switches(package_configs);
  for (const Switch& s : switches) {
    const std::string what = s.key + "=" + s.value.dump();
    const LadderRung* rung = ladder.Run(minimal, s.key, Configs(s.key, s.value), what);
    if (!rung) break;
    tried += rung->fails;
    if (rung->passes) {
      workarounds->push_back({rung->configs_json, what});
      r.stage = s.stage;
      r.stage_reason = "the repro passes with " + what;
      return;
    }
  }
  r.stage = "wrapper and runtime";
  r.stage_reason = "the repro fails with " + r.culprit_op + " as an ATen kernel, and with " +
                   (tried == static_cast<int>(switches.size())
                        ? "each of inductor's switches"
                        : std::to_string(tried) + " of " + std::to_string(switches.size()) + " switches tried (the budget)");
}

// VerifyWorkaround: each candidate on the original program, narrowest first, within the
// workaround's budget; the first under which the original passes is the workaround.
void VerifyWorkaround(Oracle& oracle, const Program& original, const json& package_configs,
                      const Workarounds& workarounds, const std::function<bool()>& out_of_time,
                      const std::function<void(const std::string&)>& progress, StageReport& r) {
  if (workarounds.empty()) {
    r.workaround_verdict = "nothing in the ladder made the repro pass";
    return;
  }
  for (const auto& [configs, what] : workarounds) {
    if (r.workaround_compiles >= r.workaround_budget || out_of_time()) {
      r.workaround_verdict = std::string(out_of_time() ? "out of time" : "the budget is spent") +
                             " before the original was checked with " + what;
      return;
    }
    progress("workaround: the original program (" + std::to_string(original.nodes.size()) + " nodes) with " + what);
    const int before = oracle.compiles();
    double run = -1;
    const Verdict v = oracle.TestWithConfigs(original, configs, &run);
    r.workaround_compiles += oracle.compiles() - before;
    if (Passes(v)) {
      r.workaround_configs_json = configs;
      r.workaround_what = what;
      r.workaround_verified = true;
      r.workaround_verdict = "the original passes with it";
      r.run_seconds_after = run;
      json merged = package_configs;
      merged.update(json::parse(configs));
      r.merged_configs_json = merged.dump();
      progress("workaround: the original passes with " + what);
      return;
    }
    r.workaround_verdict = "the original " + VerdictText(v) + " with " + what;
    progress("workaround: " + r.workaround_verdict);
  }
}

}  // namespace

StageReport FindStageAndWorkaround(Oracle& oracle, const Program& original, const Program& minimal,
                                   const std::string& culprit, const StageLadderOptions& options,
                                   const std::function<bool()>& out_of_time,
                                   const std::function<void(const std::string&)>& progress) {
  StageReport r;
  r.ladder_budget = options.ladder_budget;
  r.workaround_budget = options.workaround_budget;
  r.run_seconds_before = options.run_seconds_before;
  r.culprit_node = culprit;
  r.culprit_op = CulpritOperator(minimal, culprit);
  if (r.culprit_op.empty()) {
    r.why_not = "the repro names no culprit node";
    return r;
  }
  r.ran = true;
  const json package_configs = json::parse(oracle.configs_json());
  progress("stage ladder: which part of the compiler breaks " + r.culprit_op + " (at most " +
           std::to_string(r.ladder_budget) + " compiles of the repro)");
  Ladder ladder(oracle, out_of_time, progress, &r);
  const json op_list = json::array({r.culprit_op});
  const std::string fallback = Configs(kAtenFallbacks, op_list);
  Workarounds workarounds;
  const LadderRung* aten = nullptr;
  if (IsAten(r.culprit_op)) {
    aten = ladder.Run(minimal, "aten_fallback", fallback,
                      r.culprit_op + " called as an ATen kernel (" + std::string(kAtenFallbacks) + ")");
  } else {
    r.stage = "wrapper and runtime (or the operator itself)";
    r.stage_reason = r.culprit_op + " is not an ATen operator: inductor calls it as it is and generates no code for it";
  }
  if (aten && aten->passes) {
    workarounds.push_back({fallback, r.culprit_op + " called as an ATen kernel"});
    BelowAtenFallback(ladder, oracle, minimal, op_list, r, &workarounds);
  } else if (aten && aten->fails) {
    AroundAtenFallback(ladder, package_configs, minimal, r, &workarounds);
  }
  if (r.stage.empty()) {
    r.stage = "unknown";
    r.stage_reason = aten && !aten->passes && !aten->fails
                         ? "'" + aten->what + "' was inconclusive (" + aten->verdict + ")"
                         : "the ladder did not finish (out of time or budget)";
  }
  progress("stage ladder: " + r.stage + ": " + r.stage_reason);
  VerifyWorkaround(oracle, original, package_configs, workarounds, out_of_time, progress, r);
  return r;
}

namespace {

// Python's inductor_configs, typed, without the harness's own keys.
std::string PythonDict(const json& configs) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : configs.items()) {
    if (k.rfind("aoti_harness.", 0) == 0) continue;
    const json t = Typed(v);
    std::string value = t.is_boolean() ? (t.get<bool>() ? "True" : "False")
                        : t.is_null()  ? "None"
                        : t.is_string() ? StringLiteral(t.get<std::string>(), SourceLanguage::kPython)
                                        : t.dump();
    out += (first ? "" : ", ") + StringLiteral(k, SourceLanguage::kPython) + ": " + value;
    first = false;
  }
  return out + "}";
}

std::string CostText(const StageReport& s) {
  if (s.run_seconds_after < 0) return "not measured";
  std::string text = "the original's compiled run: " + Seconds(s.run_seconds_after) + " with it";
  if (s.run_seconds_before >= 0) text += ", " + Seconds(s.run_seconds_before) + " as built (which fails)";
  return text;
}

}  // namespace

json StageJson(const StageReport& s) {
  if (!s.ran) return {{"ran", false}, {"why_not", s.why_not}};
  json rungs = json::array();
  for (const auto& r : s.rungs) {
    rungs.push_back({{"name", r.name}, {"configs", json::parse(r.configs_json)}, {"verdict", r.verdict},
                     {"passes", r.passes}, {"seconds", r.seconds}});
  }
  return {{"ran", true},
          {"culprit", s.culprit_node},
          {"culprit_op", s.culprit_op},
          {"stage", s.stage},
          {"stage_reason", s.stage_reason},
          {"rungs", rungs},
          {"ladder_compiles", s.ladder_compiles},
          {"ladder_budget", s.ladder_budget},
          {"workaround", s.workaround_verified ? json::parse(s.workaround_configs_json) : json(nullptr)},
          {"workaround_what", s.workaround_what},
          {"workaround_verified", s.workaround_verified},
          {"workaround_verdict", s.workaround_verdict},
          {"workaround_compiles", s.workaround_compiles},
          {"workaround_budget", s.workaround_budget},
          {"run_seconds_before", s.run_seconds_before},
          {"run_seconds_after", s.run_seconds_after},
          {"seconds", s.seconds}};
}

std::string StageMarkdown(const StageReport& s) {
  if (!s.ran) return s.why_not.empty() ? "" : "## Stage\n\nNot run: " + s.why_not + ".\n\n";
  std::ostringstream md;
  md << "## Stage\n\n**" << s.stage << "**: " << s.stage_reason << ".\n\n"
     << "The ladder compiled the repro " << s.ladder_compiles << " time(s) (budget " << s.ladder_budget
     << "); the ladder and the workaround took " << Seconds(s.seconds) << ", apart from the reduction's time:\n\n"
     << "| rung | what | repro | time |\n| --- | --- | --- | ---: |\n";
  for (const auto& rung : s.rungs) {
    md << "| " << rung.name << " | " << rung.what << " | " << rung.verdict << " | " << Seconds(rung.seconds) << " |\n";
  }
  md << "\n## Workaround\n\n";
  if (s.workaround_verified) {
    md << "**" << s.workaround_what << "**: verified, the original program passes with it ("
       << s.workaround_compiles << " compile(s) of the original, budget " << s.workaround_budget << "). Cost: "
       << CostText(s) << ". The lines to use: `workaround.md`.\n\n";
  } else {
    md << "None verified: " << s.workaround_verdict << " (" << s.workaround_compiles
       << " compile(s) of the original).\n\n";
  }
  return md.str();
}

std::string WorkaroundMarkdown(const StageReport& s, const std::string& model_label) {
  std::ostringstream md;
  md << "# Workaround for " << model_label << "\n\n"
     << "Culprit: `" << s.culprit_node << "` (`" << s.culprit_op << "`). Stage at fault: **" << s.stage << "** ("
     << s.stage_reason << ").\n\n";
  if (!s.workaround_verified) {
    md << "No workaround verified: " << s.workaround_verdict << ".\n";
    return md.str();
  }
  const json merged = json::parse(s.merged_configs_json);
  md << "**" << s.workaround_what << "**: the original program compiled with it passes its check (verified by "
     << s.workaround_compiles << " compile(s)). Cost: " << CostText(s) << ".\n\n"
     << "## In the model repository (`aoti_package`)\n\n```starlark\n    inductor_configs = " << StarlarkConfigs(merged)
     << ",\n```\n\n## In Python (`aoti_compile_and_package`)\n\n";
  const json workaround = json::parse(s.workaround_configs_json);
  if (workaround.contains(kAtenFallbacks) || workaround.contains(kSkipDecompositions)) {
    // The verified compile applied the harness's keys with aoti_aten_fallbacks.py (the
    // packager's own module, beside repro.py): the same module, the same configs, so the
    // lines below are what was verified, force_disable_caches included.
    md << "`aoti_aten_fallbacks.py` (beside `repro.py`; copy it into your repository) applies the harness's own "
       << "keys as the verified compile did (" << s.workaround_what << "), with inductor's caches off for the "
       << "compile (`force_disable_caches`: they do not know of the harness's keys, and a warm cache would hand back "
       << "the buggy kernel).\n\n```python\n"
       << "import torch\nfrom aoti_aten_fallbacks import AtenFallbacks, split_configs\n\n"
       << "inductor_configs, fallbacks, undecomposed = split_configs(" << PythonDict(merged) << ")\n"
       << "with AtenFallbacks(fallbacks, undecomposed):\n"
       << "    torch._inductor.aoti_compile_and_package(ep, package_path=..., inductor_configs=inductor_configs)\n```\n";
  } else {
    md << "```python\ninductor_configs = " << PythonDict(merged) << "\n"
       << "torch._inductor.aoti_compile_and_package(ep, package_path=..., inductor_configs=inductor_configs)\n```\n";
  }
  return md.str();
}

}  // namespace aoti
