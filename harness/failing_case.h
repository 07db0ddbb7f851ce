// FailingCase: what a failed AOTI check leaves for the listener and the reducer: the
// program archive, the inputs, the options and the observed outcome. Each is written to
// $TEST_UNDECLARED_OUTPUTS_DIR/aoti/<Suite.Test>/ (case.json, original.pt2, inputs/) when Bazel runs
// the test, so CI uploads it, and kept in memory for this process' listener.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "harness/check_options.h"

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
  std::string diagnosis_markdown;  // diagnosis.md (harness/triage.h), written beside case.json
  std::string directory;        // where it was written, if it was
};

// RecordFailingCase keeps the case and, under Bazel, writes it out; returns the directory
// it was written to ("" when it was not). Never throws: a problem writing the case is
// reported on stderr.
std::string RecordFailingCase(FailingCase c);

// TakeFailingCases returns and forgets the cases recorded so far.
std::vector<FailingCase> TakeFailingCases();

// InOutputsZip: where a path lands for the user, "outputs.zip:aoti/..." when it is under
// Bazel's TEST_UNDECLARED_OUTPUTS_DIR (zipped into test.outputs/outputs.zip); else the
// path itself. For test.xml properties and messages read after the sandbox is gone.
std::string InOutputsZip(const std::string& path);

// TestOutputsZip: where Bazel leaves this test's outputs.zip once it has ended,
// "bazel-testlogs/<package>/<test>/test.outputs/outputs.zip" from TEST_TARGET; "" outside
// Bazel.
std::string TestOutputsZip();

// ForUser: a path as the user can open it after the test: "outputs.zip:aoti/... in
// bazel-testlogs/.../outputs.zip" when it is under the test's outputs; else the path.
std::string ForUser(const std::string& path);

// ReduceCaseCommand: a command that reduces a written case after the test has ended:
// unzip the case out of the test's outputs.zip and bazel run aoti_reduce on it; outside
// Bazel, aoti_reduce on the directory itself.
std::string ReduceCaseCommand(const std::string& case_dir);

}  // namespace aoti
