// FailingCase: what a failed AOTI check leaves for the listener and the reducer: the
// program archive, the inputs, the options and the observed outcome. Each is written to
// $TEST_UNDECLARED_OUTPUTS_DIR/aoti/<Suite.Test>/ (case.json, original.pt2, inputs/) when Bazel runs
// the test, so CI uploads it, and kept in memory for this process' listener.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "harness/check/check_options.h"

#include "harness/util/temp_dir.h"

namespace aoti {

struct FailingCase {
  std::string test_name;        // Suite.Test
  std::string package;          // absolute path of the .pt2
  std::string failure_class;    // preflight, compile error, load error, runtime error, signal, timeout, accuracy
  std::string message;
  // The options the check ran with (its model resolved): the reduction, repro.py and the
  // repro test judge by them.
  CheckOptions options;
  std::string inductor_configs_json = "{}";
  std::vector<at::Tensor> inputs;
  std::string diagnosis_markdown;  // diagnosis.md (harness/triage/triage.h), written beside case.json
  std::string directory;        // where it was written, if it was
};

// RecordFailingCase keeps the case and, under Bazel, writes it out; returns the directory
// it was written to ("" when it was not). Never throws: a problem writing the case is
// reported on stderr.
std::string RecordFailingCase(FailingCase c);

// TakeFailingCases returns and forgets the cases recorded so far.
std::vector<FailingCase> TakeFailingCases();

// InTestOutputs: a path under Bazel's TEST_UNDECLARED_OUTPUTS_DIR as it is named inside
// the test's outputs ("aoti/Suite.Test/repro"), whichever way Bazel keeps them: unzipped in
// test.outputs/ (Bazel 8's default, --nozip_undeclared_test_outputs) or zipped into
// test.outputs/outputs.zip (earlier Bazels). Any other path is returned as it is. For
// test.xml properties and messages read after the sandbox is gone.
std::string InTestOutputs(const std::string& path);

// TestOutputsDir: where Bazel leaves this test's (or this shard's) outputs once it has
// ended, "bazel-testlogs/<package>/<test>[/shard_N_of_M]/test.outputs", from TEST_TARGET
// and the shard variables; "" outside Bazel.
std::string TestOutputsDir();

// ForUser: a path as the user can find it after the test:
// "bazel-testlogs/.../test.outputs/aoti/..." when it is under the test's outputs (in
// outputs.zip there when Bazel zips them); else the path.
std::string ForUser(const std::string& path);

// ReduceCaseCommand: a command that reduces a written case after the test has ended:
// `bazel run` aoti_reduce on the case where Bazel left it (aoti_reduce reads it out of
// outputs.zip when Bazel zipped it); outside Bazel, aoti_reduce on the directory itself.
std::string ReduceCaseCommand(const std::string& case_dir);

// OpenedCaseDir: a case directory opened to read: its path, and the temporary directory
// it was unzipped into (when it was), removed with everything in it when the object goes
// away. Keep the object for as long as the case is read.
class OpenedCaseDir {
 public:
  explicit OpenedCaseDir(std::string path, std::unique_ptr<TempDir> unzipped = nullptr)
      : path_(std::move(path)), unzipped_(std::move(unzipped)) {}
  const std::string& path() const { return path_; }
  bool unzipped() const { return unzipped_ != nullptr; }
  // Keep: the unzipped directory stays on disk (one written into); its path.
  std::string Keep() {
    if (unzipped_) unzipped_->Release();
    return path_;
  }

 private:
  std::string path_;
  std::unique_ptr<TempDir> unzipped_;
};

// OpenCaseDir: the case directory a user names (--case_dir) as a directory to read:
// relative to BUILD_WORKING_DIRECTORY under `bazel run`; a directory under a test's
// test.outputs/ that exists only inside test.outputs/outputs.zip is unzipped into a new
// directory under $TMPDIR (said on the log), removed when the OpenedCaseDir goes away.
// Throws HarnessError naming the path when it is neither.
OpenedCaseDir OpenCaseDir(const std::string& case_dir);

// FromWorkingDirectory: a relative path as the user meant it: against
// BUILD_WORKING_DIRECTORY under `bazel run`, else as it is.
std::string FromWorkingDirectory(const std::string& path);

}  // namespace aoti
