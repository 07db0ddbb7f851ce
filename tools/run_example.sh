#!/usr/bin/env bash
# run_example.sh: the main job on the bundled example. Sets up (first use only), then in
# examples/model_repo (a model repository that depends on aoti_harness as an external
# Bazel repository) builds the example model's AOTI package and runs its harness test,
# and prints the result.
source "$(dirname "${BASH_SOURCE[0]}")/bazel_env.sh"
cd "$AOTI_ROOT/examples/model_repo"
status=0
bazel_cmd test //:all || status=$?
testlogs="$(bazel info bazel-testlogs 2>/dev/null)"
echo
echo "== aoti_harness example: $AOTI_ROOT/examples/model_repo =="
for log in "$testlogs"/*/test.log; do
  [ -f "$log" ] || continue
  name="$(basename "$(dirname "$log")")"
  verdict="$(grep -E '^\[  (PASSED|FAILED)  \]' "$log" | head -1 || true)"
  echo "$name: ${verdict:-no result}"
  grep -E '^\[aoti\]|^harness|Failure|error' "$log" | sed 's/^/  /' | head -20 || true
done
echo "archive: $(cd "$AOTI_ROOT/examples/model_repo" && bazel info bazel-bin 2>/dev/null)/tiny_classifier.pt2"
exit "$status"
