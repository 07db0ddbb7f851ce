// The harness' command-line flags (gflags, prefixed --aoti_). Defaults come from the
// environment where PyTorch users already have a name for the setting.
#pragma once

#include <string>
#include <vector>

#include <gflags/gflags.h>

DECLARE_string(aoti_package);         // the .pt2 under test (set by aoti_model_test)
DECLARE_string(aoti_packages);        // KEY=PATH,... more packages by key (aoti_model_test's packages)
DECLARE_string(aoti_model_name);      // model name inside the archive
DECLARE_double(aoti_tolerance);       // tol of the accuracy rule (upstream repro_tolerance)
DECLARE_string(aoti_accuracy);        // fp64 | strict | assert_close | sqnr
DECLARE_double(aoti_min_sqnr_db);     // the sqnr rule's least SQNR, dB
DECLARE_bool(aoti_ignore_non_fp);     // skip bool/integer outputs
DECLARE_bool(aoti_exact_non_fp);      // compare bool/integer outputs exactly
DECLARE_double(aoti_rtol);            // assert_close's rtol (negative: the dtype's default)
DECLARE_double(aoti_atol);            // assert_close's atol (negative: the dtype's default)
DECLARE_string(aoti_check_options);   // a JSON file of check options (a case.json, a repro's)
DECLARE_int64(aoti_seed);             // seed eager and compiled runs alike (negative: unseeded)
DECLARE_int32(aoti_reruns);           // more compiled runs after a failure, for its rate (flaky or not)
DECLARE_int32(aoti_votes);            // runs a pass must hold for (a flaky case's repro: any failing run fails)
DECLARE_int64(aoti_shapes_max_mb);    // MiB of inputs a planned shape may take (beyond: scaled down, "large")
DECLARE_string(aoti_shapes);          // NAME=2x64/2x64,... the generic test's own shapes (aoti_model_test's shapes)
DECLARE_string(aoti_isolation);       // child | in_process
DECLARE_double(aoti_timeout_s);       // per compiled run, in the child
DECLARE_string(aoti_runner);          // path of the aoti_runner binary
DECLARE_string(aoti_op_libraries);    // comma-separated custom-op libraries for the child
DECLARE_string(aoti_pytree_modules);  // comma-separated modules of the programs' pytree types
DECLARE_string(aoti_python_imports);  // comma-separated: what a Python child imports to run Python-only operators
DECLARE_bool(aoti_runtime_check_inputs);  // AOTI_RUNTIME_CHECK_INPUTS=1 for compiled runs
DECLARE_string(aoti_runner_env);      // K=V,... extra environment for the compiled run
DECLARE_string(aoti_child_env_pass_through);
DECLARE_string(aoti_compile_cache_dir);   // compiled candidates across runs ('none': off)
DECLARE_int64(aoti_compile_cache_max_mb);
DECLARE_string(aoti_remote_cache);          // grpc://HOST:PORT: the compile cache shared by a fleet
DECLARE_string(aoti_remote_instance_name);
DECLARE_double(aoti_remote_cache_timeout_s);
DECLARE_bool(aoti_remote_cache_upload);        // write new compiles to the remote cache (else read only)
DECLARE_string(aoti_remote_cache_ca_cert);     // grpcs://: CA bundle (default: the system's roots)
DECLARE_string(aoti_remote_cache_client_cert); // grpcs://: client certificate
DECLARE_string(aoti_remote_cache_client_key);  // grpcs://: its key
DECLARE_string(aoti_remote_cache_header_file); // 'Name: value' lines sent with every call
DECLARE_double(aoti_remote_cache_failure_ttl_h);  // hours a failed compile's entry is believed
DECLARE_bool(aoti_reduce_on_failure);     // reduce failed checks when the test ends (DUMP_AOTI_MINIFIER=1)
DECLARE_int32(aoti_repro_level);          // which failures: AOTINDUCTOR_REPRO_LEVEL
DECLARE_string(aoti_python);
DECLARE_string(aoti_compile_server);
DECLARE_string(aoti_standalone_script);
DECLARE_string(aoti_python_runner_script);
DECLARE_bool(aoti_reduce_standalone_verify);
DECLARE_int32(aoti_reduce_jobs);
DECLARE_bool(aoti_reduce_random_weights);
DECLARE_bool(aoti_reduce_stage_ladder);
DECLARE_bool(aoti_reduce_lift_control_flow);
DECLARE_double(aoti_reduce_hang_timeout_s);
DECLARE_double(aoti_reduce_time_budget_s);
  // PyTorch debug variables children keep

namespace aoti {

// ReducesOnFailure: whether the listener will reduce a failure of this class when the
// test ends (--aoti_reduce_on_failure and --aoti_repro_level; never for failures that
// are not the compiler's).
bool ReducesOnFailure(const std::string& failure_class);

// SplitFlagList: "a,b,,c" -> {"a", "b", "c"}, for the comma-separated flags.
std::vector<std::string> SplitFlagList(const std::string& value);

}  // namespace aoti
