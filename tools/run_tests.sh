#!/usr/bin/env bash
# run_tests.sh: set up (first use only) and run the whole test suite: pyflakes on the
# project's Python (tools/py_lint.sh), the AOTI packages held to their budget
# (tools/check_package_budget.sh), `bazel test //...` (the packager's and repro.py's
# Python unit tests among them; run in suite/, which reads this repository as @aoti_harness
# as a model repository does, so that the harness's C++ is built once for all of CI), the
# remote cache's client over TLS and BuildGrid's access control
# (tools/remote_cache_tls_test.sh, tools/remote_cache_auth_test.sh), then the real-model
# corpus through a model repository (tools/real_models.sh: the healthy transformers models
# and one planted failure per class under DUMP_AOTI_MINIFIER=1) with one chain beside it: a
# smoke run of the reader fuzzers (tools/fuzz.sh, 10 s each under ASan and UBSan), the
# docs' commands (tools/doc_commands.py: the README's and docs/'s commands parse, name
# paths, targets and flags that exist, and the cheap ones run), two CI machines sharing a
# BuildGrid remote cache (tools/remote_cache_test.sh), and in CI the example.
# Extra arguments go to `bazel test` alone (for example a target pattern or --test_filter=...).
source "$(dirname "${BASH_SOURCE[0]}")/bazel_env.sh"
cd "$AOTI_ROOT"
if (($#)); then
  bazel_cmd test "$@"
  exit
fi
# BuildGrid's install (the remote cache test's server) mostly downloads: in the background
# while the suite builds and runs.
buildgrid_log="${TMPDIR:-/tmp}/aoti_buildgrid_install.log"
bash "$AOTI_ROOT/tools/remote_cache.sh" install >"$buildgrid_log" 2>&1 &
buildgrid_install=$!
# The project's own Python, linted (pyflakes; seconds).
phase "py_lint" bash "$AOTI_ROOT/tools/py_lint.sh"
# The AOTI packages //... compiles, held to their written budget (seconds: bazel query).
phase "package budget" bash "$AOTI_ROOT/tools/check_package_budget.sh"
# The suite runs in suite/, whose workspace reads the harness as @aoti_harness, as a model
# repository does: the harness's C++ is built once, here, and the model repositories below
# (the remote-cache machines, the real-model corpus, the example) take it from the disk
# cache. The same tests as `bazel test //...` in the repository's root.
phase "bazel test //..." suite_cmd test @aoti_harness//...
# The GPU targets (tags = ["requires-gpu"]) are left out without --config=cuda; say which.
gpu_targets="$(suite_cmd query 'attr(tags, requires-gpu, tests(@aoti_harness//...))' 2>/dev/null | tr '\n' ' ' || true)"
if [ -n "$gpu_targets" ]; then
  echo "run_tests: skipped (requires-gpu; bazel test --config=cuda on a GPU host, or bash tools/gpu_check.sh): $gpu_targets"
fi
# Whatever runs beside the real-model corpus runs as one chain, one phase after the other:
# with the corpus's own two test jobs, that keeps at most three test processes on the
# machine's cores. (Three chains at once, on 2 cores, starved a reduction past its test's
# time.) The fuzz smoke runs and the docs' commands use the suite's Bazel server, the
# two-machine test and the example their own. The last two's tests get twice Bazel's default
# timeouts (AOTI_BAZEL_TEST_TIMEOUT, read by bazel_shared_flags): they share
# the cores with the corpus, so a test's deadline (its reduction's time left, among others)
# is measured against half a machine.
wait "$buildgrid_install" || { cat "$buildgrid_log"; echo "run_tests: BuildGrid's install failed" >&2; exit 1; }
# The compile cache's client over mutual TLS, and its messages against BuildGrid's own.
phase "remote cache, TLS" bash "$AOTI_ROOT/tools/remote_cache_tls_test.sh"
# The server's own access control: a reader's token is refused a write (BuildGrid's JWT ACLs).
phase "remote cache, access control" bash "$AOTI_ROOT/tools/remote_cache_auth_test.sh"
beside() {
  local rc=0
  phase "fuzz smoke (beside)" bash "$AOTI_ROOT/tools/fuzz.sh" --seconds "${AOTI_FUZZ_SECONDS:-10}" || rc=$?
  phase "docs' commands (beside)" "$AOTI_PYTHON" "$AOTI_ROOT/tools/doc_commands.py" --run "$AOTI_ROOT/README.md" "$AOTI_ROOT"/docs/*.md || rc=$?
  export AOTI_BAZEL_TEST_TIMEOUT="${AOTI_BAZEL_TEST_TIMEOUT:-120,600,1800,7200}"
  # Two CI machines sharing a BuildGrid remote cache: packages, test results and the
  # reducer's compiles; its machines take the harness's C++ from the suite's build.
  phase "remote cache, two machines (beside)" bash "$AOTI_ROOT/tools/remote_cache_test.sh" || rc=$?
  # CI (.ci/run, AOTI_CI_EXAMPLE_BESIDE=1) runs the README's example command here too.
  if [ -n "${AOTI_CI_EXAMPLE_BESIDE:-}" ]; then
    phase "example (beside)" bash "$AOTI_ROOT/tools/run_example.sh" || rc=$?
  fi
  return "$rc"
}
phase_beside "the fuzz smoke runs, the docs' commands, the two machines and the example, one after the other" beside
# A run that stops early stops them too.
trap phase_kill_beside EXIT
phase "real models" bash "$AOTI_ROOT/tools/real_models.sh"
phase_wait
