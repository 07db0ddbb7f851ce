#include "matchers/aoti_matches_eager.h"

#include <limits.h>
#include <stdlib.h>

#include <algorithm>

#include "harness/util/failure_class.h"
#include "harness/util/errors.h"
#include "harness/case/failing_case.h"
#include "harness/archive/pt2_archive.h"
#include "harness/triage/triage.h"
#include "harness/util/strings.h"

namespace aoti {
namespace {

MatcherDefaults& Defaults() {
  static MatcherDefaults* defaults = new MatcherDefaults;
  return *defaults;
}

bool ReducesOnFailure(const std::string& failure_class) {
  return Defaults().reduces_on_failure && Defaults().reduces_on_failure(failure_class);
}

std::string CurrentTestName() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info ? std::string(info->test_suite_name()) + "." + info->name() : "unknown";
}

// NamedByLabel: the message with the package's path (as the test gave it, inside Bazel's
// runfiles) replaced by the name the user knows it by, its Bazel label.
std::string NamedByLabel(std::string message, const std::string& path, const std::string& label) {
  if (path.empty() || label.empty() || label == path) return message;
  // Only where the path stands alone, not as the tail of a longer (absolute) path.
  for (size_t p = message.find(path); p != std::string::npos;) {
    if (p > 0 && message[p - 1] != ' ' && message[p - 1] != '\n' && message[p - 1] != '\'' && message[p - 1] != '(') {
      p = message.find(path, p + path.size());
      continue;
    }
    message.replace(p, path.size(), label);
    p = message.find(path, p + label.size());
  }
  return message;
}

}  // namespace

::testing::AssertionResult AotiMatchesEager(const std::string& package, const std::vector<at::Tensor>* inputs,
                                            const CheckOptions& options, CheckReport* report) {
  CheckOptions keep = options;
  keep.keep_values = true;  // eager's outputs, for the triage's NaN/Inf count
  CheckReport r = CheckAotiMatchesEager(package, inputs, keep);
  // A shipped package: which torch built it, on the CI page whatever the verdict.
  if (!r.built_by.empty()) ::testing::Test::RecordProperty("aoti_built_by", r.built_by);
  if (r.pass) {
    if (report) *report = r;
    return ::testing::AssertionSuccess();
  }
  // Triage: the diagnosis, its evidence and the next step; a crash or NaN/Inf is re-run
  // once more with the run-time input checks on, in the isolated runner.
  // The inputs the check ran on (the package's sample inputs when none were given) and the
  // package's config patches, read once for the triage and the recorded case.
  std::vector<at::Tensor> given;
  std::string inductor_configs_json = "{}";
  try {
    auto archive = Pt2Archive::Open(package);
    if (archive->Manifest()) inductor_configs_json = archive->Manifest()->inductor_configs_json;
    given = inputs ? *inputs : archive->SampleInputs();
  } catch (const HarnessError&) {
    // The failure message already says what is wrong with the package.
    if (inputs) given = *inputs;
  }
  std::string summary;
  try {
    TriageEvidence evidence = GatherEvidence(package, &given, r, options);
    evidence.reducing = ReducesOnFailure(r.failure_class);
    if (NeedsDebugRerun(evidence) && !evidence.package_is_shared_object) {
      DebugRerun(AbsolutePath(package), given, options, &evidence);
    }
    r.diagnoses = Triage(evidence);
    r.diagnosis_markdown = DiagnosisMarkdown(r.diagnoses, evidence);
    summary = DiagnosisSummary(r.diagnoses);
  } catch (const std::exception& e) {
    summary = std::string("(no diagnosis: the triage failed: ") + e.what() + ")";
  }
  if (report) *report = r;
  FailingCase c;
  c.test_name = CurrentTestName();
  c.package = AbsolutePath(package);
  c.failure_class = r.failure_class;
  c.message = r.message;
  c.diagnosis_markdown = r.diagnosis_markdown;
  c.options = options;
  if (!r.model.empty()) c.options.model = r.model;
  // The rule the check judged by (the one it picked for a quantized program, where the test
  // chose none): the reduction, repro.py and repro_test judge alike.
  if (r.accuracy.mode_chosen) c.options.accuracy = r.accuracy;
  // A flaky failure's case votes: its reduction and its repro fail when any of enough runs
  // fails, so that a candidate that passes once is not taken for fixed.
  if (r.flaky) c.options.votes = std::max(c.options.votes, VotesFor(r.runs_failed, r.runs));
  c.inductor_configs_json = inductor_configs_json;
  c.inputs = std::move(given);
  const std::string failure_class = r.failure_class;
  const std::string directory = RecordFailingCase(std::move(c));
  ::testing::Test::RecordProperty("aoti_failure_class", failure_class);
  if (r.runs > 1) {
    ::testing::Test::RecordProperty("aoti_failed_runs", std::to_string(r.runs_failed) + "/" + std::to_string(r.runs));
  }
  if (r.flaky) ::testing::Test::RecordProperty("aoti_flaky", "true");
  // The first three lines: what failed, the culprit (or how it will be found), where to
  // look. The details follow.
  const std::string message = NamedByLabel(r.message, package, r.package_name);
  const size_t eol = message.find('\n');
  const std::string first = message.substr(0, eol);
  // A first line too long for one screen is cut there, and given whole in the details.
  const bool cut = first.size() > 240;
  const std::string headline = cut ? first.substr(0, 237) + "..." : first;
  const std::string details = (cut ? first + "\n" : "") + (eol == std::string::npos ? "" : message.substr(eol + 1));
  const bool reducing = ReducesOnFailure(failure_class);
  std::string culprit;
  if (reducing) {
    culprit = "found by the reduction when this test ends; its summary closes this test's log (test.xml: aoti_culprit)";
  } else {
    // Why no reduction follows, for the message and for the CI page (test.xml).
    const std::string why = IsCompilerFailure(failure_class)
                                ? "run the test again with --test_env=DUMP_AOTI_MINIFIER=1 to find it"
                                : "none to reduce (" + failure_class + " is not the compiler's failure)";
    ::testing::Test::RecordProperty("aoti_not_reduced", why);
    culprit = IsCompilerFailure(failure_class) ? "not reduced; " + why : why;
    if (!r.diagnoses.empty() && !IsCompilerFailure(failure_class)) culprit += "; diagnosis " + r.diagnoses.front().id;
  }
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  failure << "AOTI check failed (" << failure_class << "): " << headline;
  failure << "\n  Culprit: " << culprit;
  if (!directory.empty()) {
    ::testing::Test::RecordProperty("aoti_case", InTestOutputs(directory));
    failure << "\n  Open: " << ForUser(directory) << "/ (" << (r.diagnosis_markdown.empty() ? "case.json" : "diagnosis.md")
            << (reducing ? "; repro/report.html once reduced)" : ")");
  } else {
    const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
    failure << "\n  Open: (no case written: "
            << (outputs && *outputs ? "it could not be written; the warning above says why"
                                    : "cases are written under bazel test, to TEST_UNDECLARED_OUTPUTS_DIR")
            << ")";
  }
  failure << "\n  --- details ---";
  if (!details.empty()) failure << "\n" << details;
  if (!summary.empty()) failure << "\n  " << summary;
  if (!r.diagnoses.empty()) ::testing::Test::RecordProperty("aoti_diagnosis", r.diagnoses.front().id);
  if (!directory.empty()) {
    if (!TestOutputsDir().empty()) {
      failure << "\n  Bazel before 8 zips test.outputs/ into test.outputs/outputs.zip (--zip_undeclared_test_outputs); "
                 "Bazel 8 leaves it unzipped.";
    }
    if (!reducing && IsCompilerFailure(failure_class)) failure << "\n  Reduce it: " << ReduceCaseCommand(directory);
  }
  return failure;
}

namespace {

::testing::AssertionResult WithDefaultOptions(const std::string& package, const std::vector<at::Tensor>* inputs) {
  CheckOptions options;
  try {
    if (Defaults().options) options = Defaults().options();
  } catch (const HarnessError& e) {
    return ::testing::AssertionFailure() << "AOTI check not run: " << e.what();
  }
  return AotiMatchesEager(package, inputs, options);
}

}  // namespace

void SetMatcherDefaults(MatcherDefaults defaults) { Defaults() = std::move(defaults); }

std::string PackageUnderTest() {
  const MatcherDefaults& d = Defaults();
  if (d.package.empty() && !d.packages.empty()) {
    std::string listed;
    for (const auto& entry : d.packages) listed += (listed.empty() ? "" : ",") + entry;
    throw HarnessError("no package under test without a key: this test names its packages by key (" +
                       d.packages_given_by + "=" + listed + "); use aoti::PackageUnderTest(\"KEY\")");
  }
  if (d.package.empty()) {
    throw HarnessError("no package under test: " + d.package_given_by +
                       " is empty (aoti_model_test sets it from its `package` attribute; a binary run by hand "
                       "needs --aoti_package=PATH.pt2, one with a main of its own aoti::SetMatcherDefaults)");
  }
  return d.package;
}

namespace {

// The packages by key, KEY=PATH, in order; a malformed entry is a HarnessError.
std::vector<std::pair<std::string, std::string>> KeyedPackages() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& entry : Defaults().packages) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size()) {
      throw HarnessError(Defaults().packages_given_by + ": '" + entry +
                         "' is not KEY=PATH (aoti_model_test writes it from its `packages` attribute)");
    }
    out.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return out;
}

}  // namespace

std::string PackageUnderTest(const std::string& key) {
  std::string keys;
  for (const auto& [k, path] : KeyedPackages()) {
    if (k == key) return path;
    keys += (keys.empty() ? "" : ", ") + k;
  }
  throw HarnessError("no package under test with key '" + key + "': " +
                     (keys.empty() ? std::string("this test names no packages by key (aoti_model_test's `packages` "
                                                 "attribute, {\"KEY\": \":target\"})")
                                   : "the keys are " + keys));
}

std::vector<std::string> PackageKeys() {
  std::vector<std::string> keys;
  for (const auto& [k, path] : KeyedPackages()) keys.push_back(k);
  return keys;
}

std::vector<at::Tensor> SampleInputs(const std::string& package) {
  return Pt2Archive::Open(package)->SampleInputs();
}

::testing::AssertionResult AotiMatchesEager(const std::string& package) {
  return WithDefaultOptions(package, nullptr);
}

::testing::AssertionResult AotiMatchesEager(const std::string& package, const std::vector<at::Tensor>& inputs) {
  return WithDefaultOptions(package, &inputs);
}

::testing::AssertionResult AotiMatchesEager(const std::string& package, const std::vector<at::Tensor>& inputs,
                                            const CheckOptions& options) {
  return AotiMatchesEager(package, &inputs, options);
}

}  // namespace aoti
