#include "plugin/flags.h"

#include <cstdlib>
#include <sstream>
#include <string>

#include "harness/util/failure_class.h"

namespace {

std::string EnvOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// The default timeout: a quarter of Bazel's TEST_TIMEOUT when set (75 s at the default
// size), so that a hang is reported with most of the test's time left to reduce it, else
// 300 s. Every run is also capped at the test's deadline (harness/util/deadline.h).
double DefaultTimeout() {
  const char* t = std::getenv("TEST_TIMEOUT");
  const double bazel = t && *t ? std::atof(t) : 0;
  return bazel > 0 ? bazel / 4 : 300;
}

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

}  // namespace

DEFINE_int64(aoti_shapes_max_mb, 1024,
             "A dynamic package's planned shapes take at most this many MiB of inputs: a declared maximum beyond it "
             "is scaled down toward the sample, and the shape is named \"large\", saying so.");
DEFINE_string(aoti_python, EnvOr("AOTI_PYTHON", ""),
              "Python with torch for the compile server and a Python child's compiled run. Env: AOTI_PYTHON.");
DEFINE_string(aoti_compile_server, "", "tools/compile_server.py (set by aoti_model_test).");
DEFINE_int32(aoti_reduce_jobs, EnvInt("AOTI_REDUCE_JOBS", 0),
             "Compile servers a reduction runs at once (0: what fits this machine: two cores and 2 GiB each, at most "
             "8). The result is the same whatever the number. Env: AOTI_REDUCE_JOBS.");
DEFINE_bool(aoti_reduce_random_weights, EnvOr("AOTI_REDUCE_RANDOM_WEIGHTS", "0") == std::string("1"),
            "Once reduced, compile the repro once more with random weights of the same shape, dtype, mean and std, "
            "and keep them in repro.pt2 where the failure reproduces (report.md says which it holds). "
            "Env: AOTI_REDUCE_RANDOM_WEIGHTS=1.");
DEFINE_bool(aoti_reduce_stage_ladder, EnvOr("AOTI_REDUCE_STAGE_LADDER", "1") != std::string("0"),
            "Once reduced, find the stage of the compiler at fault (a few compiles of the repro) and a workaround "
            "verified on the original (one or two compiles of it): report.md, workaround.md. "
            "Env: AOTI_REDUCE_STAGE_LADDER=0 turns it off.");
DEFINE_string(aoti_standalone_script, "",
              "reducer/repro/standalone.py (set by aoti_model_test): after each reduction it writes the torch-only "
              "repro_standalone.py and upstream_issue.md into the repro; empty: not written.");
DEFINE_string(aoti_python_runner_script, "",
              "tools/python_runner.py (set by aoti_model_test): runs the compiled model in a Python child where "
              "--aoti_python_imports asks for it.");
DEFINE_bool(aoti_reduce_standalone_verify, EnvOr("AOTI_REDUCE_STANDALONE_VERIFY", "1") != std::string("0"),
            "Run repro_standalone.py alone once written (an empty directory, only torch importable: one AOTI "
            "compile) and record whether it reproduces (summary.json, report.md, test.xml). "
            "Env: AOTI_REDUCE_STANDALONE_VERIFY=0 writes it without running it.");
DEFINE_bool(aoti_reduce_lift_control_flow, true,
            "Reduce a program with control flow (cond, while_loop, scan, map, autocast regions) with it lifted as it "
            "ran (the branch taken, a loop's first iteration), where that still fails the same way; false keeps the "
            "control flow in the repro and cuts down its body instead.");
DEFINE_double(aoti_reduce_hang_timeout_s, 20,
              "Reducing a hang: a candidate's compiled run that goes on this long counts as hanging (capped at the "
              "test's own --aoti_timeout_s; 0: that timeout).");
DEFINE_double(aoti_reduce_time_budget_s, 0,
              "Time budget of each reduction in a test (0: what is left of Bazel's TEST_TIMEOUT, less a margin; "
              "no budget outside Bazel).");
DEFINE_bool(aoti_reduce_on_failure, EnvOr("DUMP_AOTI_MINIFIER", "0") == std::string("1"),
            "Reduce every failed AOTI check to a minimal repro in the test outputs. Env: DUMP_AOTI_MINIFIER=1.");
DEFINE_int32(aoti_repro_level, EnvInt("AOTINDUCTOR_REPRO_LEVEL", 2),
             "Which failures to reduce: 1 compile failures, 2 any, 3 any (case written first), 4 accuracy only. "
             "Env: AOTINDUCTOR_REPRO_LEVEL.");

DEFINE_string(aoti_package, "", "Path to the .pt2 archive under test (set by aoti_model_test).");
DEFINE_string(aoti_packages, "",
              "More packages under test by key, KEY=PATH,... (set by aoti_model_test's `packages`); "
              "aoti::PackageUnderTest(\"KEY\") returns one.");
DEFINE_string(aoti_model_name, "",
              "Model name inside the archive (default: the package's own, as its manifest names it, else the one "
              "model the archive holds).");
DEFINE_double(aoti_tolerance, 1e-3, "tol of the accuracy rule, as PyTorch's repro_tolerance (default 1e-3).");
DEFINE_string(aoti_accuracy, EnvOr("AOTI_ACCURACY", "fp64").c_str(),
              "Accuracy rule: fp64 (upstream's fp64-RMSE rule), strict (allclose only), "
              "assert_close (torch.testing.assert_close, its defaults per dtype or --aoti_rtol/--aoti_atol), "
              "sqnr (SQNR against eager, at least --aoti_min_sqnr_db). Not given: fp64, or sqnr for a quantized "
              "program (quantized_decomposed operators). Env: AOTI_ACCURACY.");
DEFINE_double(aoti_min_sqnr_db, 30, "With the sqnr rule: the least SQNR (dB) a floating output passes with.");
DEFINE_bool(aoti_ignore_non_fp, false, "Do not compare bool and integer outputs.");
DEFINE_bool(aoti_exact_non_fp, false, "Compare bool and integer outputs exactly (default: allclose at the tolerance, "
            "as upstream's rule).");
DEFINE_double(aoti_rtol, -1, "With --aoti_accuracy=assert_close: rtol for floating outputs (negative: "
              "torch.testing.assert_close's default for the dtype).");
DEFINE_double(aoti_atol, -1, "With --aoti_accuracy=assert_close: atol for floating outputs (negative: "
              "torch.testing.assert_close's default for the dtype).");
DEFINE_int64(aoti_seed, -1,
             "Seed ATen's generator the same before the eager and the compiled runs: a random model compiled "
             "with inductor_configs {\"fallback_random\": \"true\"} then draws the same numbers in both and can be "
             "judged against eager (negative: unseeded; a random model then fails as nondeterministic).");
DEFINE_int32(aoti_reruns, 3,
             "After a compiled run fails (accuracy, a runtime error, a signal), run it this many more times on the "
             "same inputs: a failure that does not come back every time is reported as flaky, with its rate.");
DEFINE_int32(aoti_votes, 1,
             "Runs a pass must hold for: the check fails when any of them fails. A flaky case's reduction, repro.py "
             "and repro_test vote so (set from the failure's rate); 1: one run judges.");
DEFINE_string(aoti_shapes, "",
              "More shapes for the generic test to check each package at, NAME=SIZES,... with each user input's "
              "sizes separated by '/' and dimensions by 'x' (e.g. long=2x64/2x64); set by aoti_model_test's shapes. "
              "A package with dynamic dimensions is also checked at its ranges' minimum, maximum and distinct sizes.");
DEFINE_string(aoti_check_options, "",
              "A JSON file of check options: a case.json the harness wrote (its check_options) or a repro's "
              "check_options.json. The check runs with them; --aoti_* flags given on the command line override "
              "single fields.");
DEFINE_string(aoti_isolation, "child", "Run the compiled model in a child process (child) or in the test process (in_process).");
DEFINE_double(aoti_timeout_s, DefaultTimeout(), "Timeout for one compiled run in the child process, in seconds.");
DEFINE_string(aoti_runner, "", "Path of the aoti_runner binary (default: found in the test's runfiles).");
DEFINE_string(aoti_op_libraries, "", "Comma-separated shared libraries of custom operators the compiled model calls.");
DEFINE_string(aoti_pytree_modules, EnvOr("AOTI_PYTREE_MODULES", ""),
              "Comma-separated Python modules whose pytree types the model's programs use (as "
              "transformers.modeling_outputs): the harness's Python readers (the compile server, repro.py) import "
              "these to read a program, and never a module that only a file names. Env: AOTI_PYTREE_MODULES.");
DEFINE_string(aoti_python_imports, EnvOr("AOTI_PYTHON_IMPORTS", ""),
              "A model that calls operators written only in Python (a custom_op with no C++ kernel: transformers' "
              "grouped_mm_fallback), checked anyway: its compiled model runs in a Python child that imports these "
              "first (comma-separated module names, or .py files), and is judged against the eager and float64 "
              "outputs Python recorded when the package was built (its sample inputs only; not reduced). Empty: such "
              "a model fails as 'not supported', named before anything runs. Env: AOTI_PYTHON_IMPORTS.");
DEFINE_bool(aoti_runtime_check_inputs, EnvOr("AOTI_RUNTIME_CHECK_INPUTS", "0") == std::string("1"),
            "Set AOTI_RUNTIME_CHECK_INPUTS=1 for compiled runs (the generated code checks its inputs). "
            "Env: AOTI_RUNTIME_CHECK_INPUTS.");
DEFINE_string(aoti_runner_env, "",
              "Comma-separated K=V settings for the compiled run's child process only, e.g. "
              "CUDA_LAUNCH_BLOCKING=1,PYTORCH_NO_CUDA_MEMORY_CACHING=1 while debugging.");
DEFINE_string(aoti_child_env_pass_through, "",
              "Comma-separated PyTorch debug and repro variables (DUMP_AOTI_MINIFIER, TORCH_COMPILE_DEBUG, ...; "
              "the list is in docs/writing_tests.md) that the runner and the compile server keep from this process' "
              "environment; '*' keeps all of them. By default every child gets them removed.");
DEFINE_string(aoti_compile_cache_dir, "",
              "Where the reducer keeps compiled candidates across runs (default: $AOTI_COMPILE_CACHE_DIR, else "
              "$XDG_CACHE_HOME or ~/.cache, under aoti_harness/compile_cache); 'none' turns the cache off. Under "
              "bazel test, where HOME is unset or the test's own, the user's ~/.cache/aoti_harness/compile_cache when "
              "the test may write there, else /tmp/aoti_harness-<uid>/compile_cache (this user's own), so that a "
              "second run is warm; --test_env=AOTI_COMPILE_CACHE_DIR=DIR --sandbox_writable_path=DIR chooses another.");
DEFINE_int64(aoti_compile_cache_max_mb, 4096, "Size cap of the compile cache; the least recently used entries go first.");
DEFINE_string(aoti_remote_cache, EnvOr("AOTI_REMOTE_CACHE", "").c_str(),
              "A Remote Execution API server (grpc://HOST:PORT or grpcs://HOST:PORT, e.g. the one Bazel's "
              "--remote_cache names) that the reducer's compile cache also reads and writes, so that a reduction "
              "another machine ran compiles nothing here. The local cache stays first and the fallback: a server "
              "that fails or times out is left for the rest of the run. Env: AOTI_REMOTE_CACHE.");
DEFINE_string(aoti_remote_instance_name, EnvOr("AOTI_REMOTE_INSTANCE_NAME", "").c_str(),
              "The remote cache's instance name (Bazel's --remote_instance_name). Env: AOTI_REMOTE_INSTANCE_NAME.");
DEFINE_double(aoti_remote_cache_timeout_s, 10, "Seconds each call to the remote compile cache may take.");
DEFINE_bool(aoti_remote_cache_upload, EnvOr("AOTI_REMOTE_CACHE_UPLOAD", "0") == std::string("1"),
            "Write the reducer's new compiles to the remote cache too (off: it is only read). For the trusted CI "
            "jobs that publish, as Bazel's --remote_upload_local_results. Env: AOTI_REMOTE_CACHE_UPLOAD=1.");
DEFINE_string(aoti_remote_cache_ca_cert, EnvOr("AOTI_REMOTE_CACHE_CA_CERT", "").c_str(),
              "grpcs://: a PEM bundle of the certificate authorities to trust (default: the system's roots), as "
              "Bazel's --tls_certificate. Env: AOTI_REMOTE_CACHE_CA_CERT.");
DEFINE_string(aoti_remote_cache_client_cert, EnvOr("AOTI_REMOTE_CACHE_CLIENT_CERT", "").c_str(),
              "grpcs://: this client's certificate (PEM), for a server that asks for one; with "
              "--aoti_remote_cache_client_key. Env: AOTI_REMOTE_CACHE_CLIENT_CERT.");
DEFINE_string(aoti_remote_cache_client_key, EnvOr("AOTI_REMOTE_CACHE_CLIENT_KEY", "").c_str(),
              "grpcs://: the client certificate's private key (PEM). Env: AOTI_REMOTE_CACHE_CLIENT_KEY.");
DEFINE_string(aoti_remote_cache_header_file, EnvOr("AOTI_REMOTE_CACHE_HEADER_FILE", "").c_str(),
              "A file of headers sent with every call to the remote cache, one 'Name: value' per line (e.g. "
              "'Authorization: Bearer TOKEN'), as Bazel's --remote_header; a file, so that no secret is on a command "
              "line. Env: AOTI_REMOTE_CACHE_HEADER_FILE.");
DEFINE_double(aoti_remote_cache_failure_ttl_h, 168,
              "Hours a failed compile's cache entry is believed (then compiled again), here and on the server.");

namespace aoti {

bool ReducesOnFailure(const std::string& failure_class) {
  if (!FLAGS_aoti_reduce_on_failure) return false;
  // Not the compiler's failures, or ones no rule can judge: nothing to reduce.
  if (!IsCompilerFailure(failure_class)) return false;
  switch (FLAGS_aoti_repro_level) {
    case 1: return Is(failure_class, FailureClass::kCompileError);
    case 4: return Is(failure_class, FailureClass::kAccuracy);
    default: return true;
  }
}


std::vector<std::string> SplitFlagList(const std::string& value) {
  std::vector<std::string> out;
  std::stringstream ss(value);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace aoti
