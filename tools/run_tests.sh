#!/usr/bin/env bash
# run_tests.sh: set up (first use only) and run the whole test suite: pyflakes on the
# project's Python (tools/py_lint.sh), the AOTI packages held to their budget
# (tools/check_package_budget.sh), `bazel test //...` (the packager's and repro.py's
# Python unit tests among them),
# a smoke run of the reader fuzzers (tools/fuzz.sh, 10 s each under ASan and UBSan), then
# two CI machines sharing a BuildGrid remote cache (tools/remote_cache_tls_test.sh,
# tools/remote_cache_auth_test.sh, then tools/remote_cache_test.sh), the real-model corpus through a model repository
# (tools/real_models.sh: the healthy transformers models and one planted failure per class
# under DUMP_AOTI_MINIFIER=1), and last the
# docs' commands (tools/doc_commands.py: the README's and docs/'s commands parse,
# name paths, targets and flags that exist, and the cheap ones run).
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
phase "bazel test //..." bazel_cmd test //...
# The GPU targets (tags = ["requires-gpu"]) are left out without --config=cuda; say which.
gpu_targets="$(bazel_cmd query 'attr(tags, requires-gpu, tests(//...))' 2>/dev/null | tr '\n' ' ' || true)"
if [ -n "$gpu_targets" ]; then
  echo "run_tests: skipped (requires-gpu; bazel test --config=cuda on a GPU host, or bash tools/gpu_check.sh): $gpu_targets"
fi
# The fuzz smoke runs and then the docs' commands use this workspace's Bazel server, and the
# phases below the model repositories' own: they run beside those, one after the other, in
# the idle core those leave (a reduction compiles one program at a time; the remote cache
# test waits on its server).
beside() {
  phase "fuzz smoke (beside)" bash "$AOTI_ROOT/tools/fuzz.sh" --seconds "${AOTI_FUZZ_SECONDS:-10}" || return
  phase "docs' commands (beside)" "$AOTI_PYTHON" "$AOTI_ROOT/tools/doc_commands.py" --run "$AOTI_ROOT/README.md" "$AOTI_ROOT"/docs/*.md
}
phase_beside "the fuzz smoke runs, then the docs' commands" beside
# A run that stops early stops them too.
trap '[ -z "${PHASE_BESIDE_PID:-}" ] || kill "$PHASE_BESIDE_PID" 2>/dev/null || true' EXIT
# Two CI machines sharing a BuildGrid remote cache: packages, test results and the
# reducer's compiles. Before the model repositories: its first machine builds the harness's
# C++ as a model repository does, into the suite's disk cache, and the real-model corpus and
# the example then reuse that build.
wait "$buildgrid_install" || { cat "$buildgrid_log"; echo "run_tests: BuildGrid's install failed" >&2; exit 1; }
# The compile cache's client over mutual TLS, and its messages against BuildGrid's own.
phase "remote cache, TLS" bash "$AOTI_ROOT/tools/remote_cache_tls_test.sh"
# The server's own access control: a reader's token is refused a write (BuildGrid's JWT ACLs).
phase "remote cache, access control" bash "$AOTI_ROOT/tools/remote_cache_auth_test.sh"
phase "remote cache, two machines" bash "$AOTI_ROOT/tools/remote_cache_test.sh"
phase "real models" bash "$AOTI_ROOT/tools/real_models.sh"
phase_wait
