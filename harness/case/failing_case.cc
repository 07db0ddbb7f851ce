#include "harness/case/failing_case.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>

#include <glog/logging.h>
#include <nlohmann/json.hpp>

#include "harness/case/case_file.h"
#include "harness/util/errors.h"
#include "harness/util/json_util.h"
#include "harness/util/strings.h"
#include "harness/util/subprocess.h"
#include "harness/archive/tensor_bundle.h"
#include "harness/util/temp_dir.h"

namespace aoti {
namespace {

std::mutex& Mutex() {
  static std::mutex m;
  return m;
}

std::vector<FailingCase>& Cases() {
  static auto* cases = new std::vector<FailingCase>();
  return *cases;
}

// How many failing cases each test has recorded so far.
std::map<std::string, int>& CasesPerTest() {
  static auto* counts = new std::map<std::string, int>();
  return *counts;
}

}  // namespace

std::string InTestOutputs(const std::string& path) {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  if (!dir || !*dir) return path;
  const std::string prefix = std::string(dir) + "/";
  return StartsWith(path, prefix) ? path.substr(prefix.size()) : path;
}

std::string TestOutputsDir() {
  const char* target = std::getenv("TEST_TARGET");
  if (!target || !*target) return "";
  // //pkg:name and @repo//pkg:name; bazel-testlogs keeps an external test under external/.
  std::string label = target;
  std::string prefix;
  if (StartsWith(label, "@")) {
    const size_t slashes = label.find("//");
    if (slashes == std::string::npos) return "";
    const std::string repo = label.substr(1, slashes - 1);
    if (!repo.empty()) prefix = "external/" + repo + "/";
    label = label.substr(slashes);
  }
  if (StartsWith(label, "//")) label = label.substr(2);
  const size_t colon = label.find(':');
  const std::string package = colon == std::string::npos ? label : label.substr(0, colon);
  const std::string name = colon == std::string::npos ? label.substr(label.rfind('/') + 1) : label.substr(colon + 1);
  // A sharded test keeps each shard's outputs apart: shard_<index + 1>_of_<total>.
  std::string shard;
  const char* total = std::getenv("TEST_TOTAL_SHARDS");
  const char* index = std::getenv("TEST_SHARD_INDEX");
  if (total && index && std::atoi(total) > 1) {
    shard = "/shard_" + std::to_string(std::atoi(index) + 1) + "_of_" + std::to_string(std::atoi(total));
  }
  return "bazel-testlogs/" + prefix + (package.empty() ? "" : package + "/") + name + shard + "/test.outputs";
}

std::string ForUser(const std::string& path) {
  const std::string inside = InTestOutputs(path);
  const std::string dir = TestOutputsDir();
  if (inside == path || dir.empty()) return path;
  return dir + "/" + inside;
}

std::string ReduceCaseCommand(const std::string& case_dir) {
  const std::string where = ForUser(case_dir);
  if (where == case_dir) return "aoti_reduce minify --case_dir=" + case_dir;
  return "bazel run @aoti_harness//plugin:aoti_reduce -- minify --case_dir=" + where;
}

std::string FromWorkingDirectory(const std::string& path) {
  const char* wd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (path.empty() || path[0] == '/' || !wd || !*wd) return path;
  return std::string(wd) + "/" + path;
}

OpenedCaseDir OpenCaseDir(const std::string& case_dir) {
  const std::string path = FromWorkingDirectory(case_dir);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return OpenedCaseDir(path);
  // Under a test's test.outputs/ that Bazel zipped: the entry out of outputs.zip.
  const std::string marker = "/test.outputs/";
  const size_t at = path.rfind(marker);
  if (at != std::string::npos) {
    const std::string zip = path.substr(0, at) + "/test.outputs/outputs.zip";
    std::string entry = path.substr(at + marker.size());
    while (!entry.empty() && entry.back() == '/') entry.pop_back();
    if (std::filesystem::is_regular_file(zip, ec) && !entry.empty()) {
      auto unzipped = std::make_unique<TempDir>("aoti_case");
      const std::string into = unzipped->path();
      const std::string log = into + "/unzip.log";
      int status = 0;
      if (!RunLogged({FindExecutable("unzip"), "-q", "-o", zip, entry + "/*", "-d", into}, {}, log, 120, &status) ||
          !std::filesystem::is_directory(into + "/" + entry, ec)) {
        throw HarnessError("--case_dir=" + case_dir + ": " + zip + " holds no " + entry + "/ (unzip exit status " +
                           std::to_string(WEXITSTATUS(status)) + ", its output in " + log + ")");
      }
      LOG(INFO) << "the case " << entry << " unzipped out of " << zip << " into " << into << "/" << entry;
      return OpenedCaseDir(into + "/" + entry, std::move(unzipped));
    }
  }
  throw HarnessError("--case_dir=" + case_dir + ": no such directory" +
                     (path == case_dir ? "" : " (" + path + ")") +
                     "; expected a case directory the harness wrote (case.json, inputs/), or one under a test's "
                     "test.outputs/ that Bazel zipped into test.outputs/outputs.zip");
}

std::string RecordFailingCase(FailingCase c) {
  const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  if (outputs && *outputs) {
    std::string name = c.test_name;
    for (auto& ch : name) {
      if (ch == '/') ch = '_';
    }
    // The first failing check of a test writes aoti/<test>/; a second one in the same
    // test aoti/<test>/2/, and so on, so no case overwrites another.
    int n;
    {
      std::lock_guard<std::mutex> lock(Mutex());
      n = ++CasesPerTest()[c.test_name];
    }
    const std::string dir = std::string(outputs) + "/aoti/" + name + (n > 1 ? "/" + std::to_string(n) : "");
    try {
      MakeDirs(dir + "/inputs");
      WriteTensorBundle(dir + "/inputs", c.inputs);
      // The package travels with the case, so the uploaded outputs are enough to reduce it.
      std::string package = c.package;
      try {
        CopyFileAtomically(c.package, dir + "/original.pt2");
        package = "original.pt2";
      } catch (const std::exception& e) {
        LOG(WARNING) << "could not copy " << c.package << " into the case: " << e.what();
      }
      // The op libraries travel with the case too.
      CheckOptions options = c.options;
      options.runner.op_libraries = CopyOpLibraries(c.options.runner.op_libraries, dir);
      CaseFile f;
      f.test = c.test_name;
      f.package = package == "original.pt2" ? dir + "/original.pt2" : package;
      f.failure_class = c.failure_class;
      f.message = c.message;
      f.inductor_configs_json = c.inductor_configs_json;
      f.inputs_dir = dir + "/inputs";
      // Where the inputs were (each one's device is in inputs/manifest.json too): the
      // reducer and the repro run there.
      f.device = c.inputs.empty() || !c.inputs[0].defined() ? std::string("cpu") : c.inputs[0].device().str();
      f.options = options;
      const nlohmann::json j = CaseFileToJson(f, dir);
      if (!c.diagnosis_markdown.empty()) WriteTextFileAtomically(dir + "/diagnosis.md", c.diagnosis_markdown);
      // Written aside and moved into place: a test killed at its timeout leaves a whole
      // case.json or none.
      WriteTextFileAtomically(dir + "/case.json", JsonText(j, 1));
      c.directory = dir;
    } catch (const std::exception& e) {
      LOG(WARNING) << "could not write the failing case to " << dir << ": " << e.what();
    }
  }
  const std::string directory = c.directory;
  std::lock_guard<std::mutex> lock(Mutex());
  Cases().push_back(std::move(c));
  return directory;
}

std::vector<FailingCase> TakeFailingCases() {
  std::lock_guard<std::mutex> lock(Mutex());
  std::vector<FailingCase> out;
  out.swap(Cases());
  return out;
}

}  // namespace aoti
