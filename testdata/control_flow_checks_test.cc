// The check on programs that are not one straight line (the control-flow programs of the
// corpus, AOTI-compiled): state written in forward starts from the package's own every run,
// inputs that break a data-dependent size's range are the inputs' failure, and a construct
// the harness does not run is a verdict of its own, never a missing library.
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>

#include <ATen/ops/scalar_tensor.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/archive/archive_rewrite.h"
#include "harness/check/check.h"
#include "harness/archive/pt2_archive.h"
#include "harness/util/failure_class.h"
#include "harness/util/temp_dir.h"
#include "plugin/check_flags.h"
#include "plugin/flags.h"
#include "reducer/artifacts.h"
#include "reducer/reducer.h"

namespace aoti {
namespace {

using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Corpus(const std::string& name) { return "testdata/corpus/" + name + "_aoti.pt2"; }

// A KV cache and a step counter written in forward: AOTI keeps them inside the loaded model,
// where they persist from call to call. Each of the votes' compiled runs loads the package
// afresh, so each starts from the package's own state and returns step 1, as eager does.
TEST(State, EveryCompiledRunStartsFromThePackagesOwnState) {
  for (const bool isolate : {true, false}) {
    SCOPED_TRACE(isolate ? "isolated runs" : "in-process runs");
    CheckOptions options = CheckOptionsFromFlags();
    options.runner.isolate = isolate;
    options.votes = 3;
    options.keep_values = true;
    const CheckReport r = CheckAotiMatchesEager(Corpus("kv_cache"), nullptr, options);
    EXPECT_TRUE(r.pass) << r.message;
    EXPECT_EQ(r.runs, 3);
    ASSERT_EQ(r.outcome.outputs.size(), 2u);
    EXPECT_EQ(r.outcome.outputs[1].item<int64_t>(), 1) << "the compiled run did not start at the package's step";
    ASSERT_EQ(r.eager_outputs.size(), 2u);
    EXPECT_EQ(r.eager_outputs[1].item<int64_t>(), 1) << "eager did not start at the package's step";
  }
}

// The same inputs checked twice in one process: the second check starts where the first did.
TEST(State, ASecondCheckInTheSameProcessStartsAfresh) {
  const CheckOptions options = CheckOptionsFromFlags();
  for (int i = 0; i < 2; ++i) {
    const CheckReport r = CheckAotiMatchesEager(Corpus("kv_cache"), nullptr, options);
    EXPECT_TRUE(r.pass) << "check " << i + 1 << ": " << r.message;
  }
}

// repro.py starts every run from the program's own state too: a repro of the KV cache judged
// by two votes under the strict rule (the compiled model against eager) passes, run after
// run. (Eager on ep.module() wrote the program's own buffers, so its second vote started at
// step 2 against the compiled model's step 1, and a healthy repro "reproduced".)
TEST(State, TheReproStartsFromTheProgramsOwnStateEveryRun) {
  ASSERT_FALSE(FLAGS_aoti_python.empty()) << "--aoti_python is required";
  auto archive = Pt2Archive::Open(Corpus("kv_cache"));
  ReduceResult r;
  r.original = r.minimal = Program::Parse(archive->ProgramJson("model"), "kv_cache");
  r.model = "model";
  r.failure_class = "accuracy";
  r.message = "output 0 differs";
  r.final_archive = Corpus("kv_cache");
  r.inductor_configs_json = "{}";
  r.nodes_before = r.nodes_after = r.minimal.nodes.size();
  ReduceSpec spec;
  spec.package = Corpus("kv_cache");
  spec.check = CheckOptionsFromFlags();
  spec.check.accuracy.mode = AccuracyMode::kStrict;
  spec.check.votes = 2;
  TempDir dir("kv_cache_repro");
  const std::string out = dir.path() + "/repro";
  WriteArtifacts(r, spec, ReduceOptions(), out);
  const std::string log = dir.path() + "/repro.log";
  const int status = std::system((FLAGS_aoti_python + " " + out + "/repro.py > " + log + " 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  std::ifstream in(log);
  const std::string printed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(WEXITSTATUS(status), 0) << printed;
  EXPECT_THAT(printed, HasSubstr("run 2 of 2"));
}

// Entries: the names in a directory, sorted.
std::set<std::string> Entries(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// What a check makes in the temporary directory (the runner child's inputs and outputs, its
// unzipped package) is gone when it ends: a CI machine's disk does not fill one run at a time.
TEST(Temporaries, ACheckLeavesNothingInTheTemporaryDirectory) {
  const char* test_tmp = std::getenv("TEST_TMPDIR");
  const std::string tmp = test_tmp && *test_tmp ? test_tmp : TempDir("tmp_count").Release();
  const auto before = Entries(tmp);
  CheckOptions options = CheckOptionsFromFlags();
  options.runner.isolate = true;
  ASSERT_TRUE(CheckAotiMatchesEager(Corpus("kv_cache"), nullptr, options).pass);
  EXPECT_EQ(Entries(tmp), before) << "the check left files in " << tmp;
}

// data_dependent.py checks item() into [1, 8] (torch._check): k = 9 breaks the program's own
// assumption. AOTI's run fails on it, and so does eager: the inputs' failure, not AOTI's.
TEST(DataDependent, InputsOutsideADataDependentRangeAreAPreflightFailure) {
  auto archive = Pt2Archive::Open(Corpus("data_dependent"));
  std::vector<at::Tensor> inputs = archive->SampleInputs();
  ASSERT_EQ(inputs.size(), 2u);
  inputs[1] = at::scalar_tensor(9, at::kLong);
  const CheckReport r = CheckAotiMatchesEager(Corpus("data_dependent"), &inputs, CheckOptionsFromFlags());
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.failure_class, "preflight") << r.message;
  // torch 2.13 and later export the range as a runtime assertion (u2 <= 8) that eager
  // fails; torch 2.12 only as the program's range constraint, which the interpreter checks.
  EXPECT_THAT(r.message, AllOf(HasSubstr("break the program's own assumptions"),
                               AnyOf(HasSubstr("u2 <= 8"), HasSubstr("u2 = 9, outside the range"))));
}

// while_loop_layer.py's loop with a bound no counter reaches: the compiled model does not end
// (its run's timeout stops it), and neither does eager, which the check runs under the same
// timeout. The model's failure on these inputs, not the compiler's: invalid inputs, saying
// where eager stopped, nothing reduced. (Eager once ran without a deadline: the test hung
// until Bazel killed it, no verdict, no case.)
TEST(Loops, AModelThatDoesNotEndInEagerEitherIsNotACompilerBug) {
  auto archive = Pt2Archive::Open(Corpus("while_loop_layer"));
  std::vector<at::Tensor> inputs = archive->SampleInputs();
  ASSERT_EQ(inputs.size(), 2u);
  inputs[1] = at::scalar_tensor(std::numeric_limits<int64_t>::max(), at::kLong);
  CheckOptions options = CheckOptionsFromFlags();
  options.runner.timeout_s = 3;
  options.reruns = 0;
  options.inputs_from = "a bound the loop never reaches";
  const auto start = std::chrono::steady_clock::now();
  const CheckReport r = CheckAotiMatchesEager(Corpus("while_loop_layer"), &inputs, options);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 60);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.failure_class, "invalid inputs") << r.message;
  EXPECT_FALSE(IsCompilerFailure(r.failure_class));
  EXPECT_THAT(r.message, AllOf(HasSubstr("eager does not end either"), HasSubstr("the eager run did not end by the run's timeout of 3 s"),
                               ::testing::ContainsRegex("iteration [0-9]+ of node 'while_loop'"), HasSubstr("a bound the loop never reaches")));
}

TEST(DataDependent, SampleInputsPass) { EXPECT_TRUE(CheckAotiMatchesEager(Corpus("data_dependent"), nullptr, CheckOptionsFromFlags()).pass); }

// A higher-order op the harness does not run (here: the while_loop renamed invoke_subgraph,
// which AOTI's C++ wrapper does not compile either): "not supported", naming the node and
// the construct; not a harness error, and no word of a library to give.
TEST(NotSupported, AnUnknownHigherOrderOpIsAVerdictOfItsOwn) {
  TempDir dir("not_supported");
  const std::string edited = dir.path() + "/edited.pt2";
  auto archive = Pt2Archive::Open(Corpus("while_loop_layer"));
  RewriteArchive(*archive, edited, [](const std::string& name, std::string* data) {
    if (name == "models/model.json") {
      nlohmann::json doc = nlohmann::json::parse(*data);
      for (auto& n : doc["graph_module"]["graph"]["nodes"]) {
        if (n["target"] == "torch.ops.higher_order.while_loop") n["target"] = "torch.ops.higher_order.invoke_subgraph";
      }
      *data = doc.dump();
    }
    return true;
  });
  const CheckReport r = CheckAotiMatchesEager(edited, nullptr, CheckOptionsFromFlags());
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.failure_class, "not supported") << r.message;
  EXPECT_THAT(r.message, AllOf(HasSubstr("invoke_subgraph"), HasSubstr("node 'while_loop'"),
                               HasSubstr("does not run yet"), Not(HasSubstr("shared library"))));
}

}  // namespace
}  // namespace aoti
