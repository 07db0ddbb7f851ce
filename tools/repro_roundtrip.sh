#!/usr/bin/env bash
# repro_roundtrip.sh: the reducer's repro runs both ways. Reduces a planted relu accuracy
# bug with aoti_reduce, then checks that
#   1. `python repro.py` reproduces the failure (exit status 1), and
#   2. the generated BUILD.bazel + repro_test.cc, dropped into a model repository that
#      depends on aoti_harness, fail under `bazel test` with the same failure class.
# Run by .ci/run after the test suite.
source "$(dirname "${BASH_SOURCE[0]}")/bazel_env.sh"
cd "$AOTI_ROOT"
bazel_cmd build //plugin:aoti_reduce //harness/runner:aoti_runner //testdata/reduce:relu_cos_accuracy >/dev/null
bin="$(bazel info bazel-bin)"
ws="$(mktemp -d)"
trap 'rm -rf "$ws"' EXIT
(cd "$bin/plugin/aoti_reduce.runfiles/aoti_harness" &&
  "$bin/plugin/aoti_reduce" minify --package="$bin/testdata/reduce/relu_cos_accuracy.pt2" \
    --out="$ws/repro" --aoti_runner="$bin/harness/runner/aoti_runner" --python="$AOTI_PYTHON")
echo "== python repro.py"
set +e
"$AOTI_PYTHON" "$ws/repro/repro.py"
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "repro_roundtrip: FAIL: python repro.py exited $rc, expected 1 (reproduces)"; exit 1; }
echo "== bazel test //repro:repro_test in a model repository"
sed "s|\"../..\"|\"$AOTI_ROOT\"|; s|\"../../third_party|\"$AOTI_ROOT/third_party|g" \
  "$AOTI_ROOT/examples/model_repo/WORKSPACE" >"$ws/WORKSPACE"
cp "$AOTI_ROOT/examples/model_repo/.bazelrc" "$ws/.bazelrc"
touch "$ws/BUILD.bazel"
set +e
(cd "$ws" && bazel_cmd test //repro:repro_test >"$ws/bazel.log" 2>&1)
rc=$?
log="$(cd "$ws" && bazel info bazel-testlogs 2>/dev/null)/repro/repro_test/test.log"
set -e
grep -q "AOTI check failed (accuracy)" "$log" 2>/dev/null ||
  { echo "repro_roundtrip: FAIL: bazel test exited $rc without the accuracy failure"; tail -30 "$ws/bazel.log"; exit 1; }
[ "$rc" -eq 3 ] || { echo "repro_roundtrip: FAIL: bazel test exited $rc, expected 3 (test failed)"; exit 1; }
(cd "$ws" && bazel shutdown >/dev/null 2>&1) || true
echo "repro_roundtrip: 2 passed, 0 failed (repro.py reproduces; repro_test fails under bazel test)"
