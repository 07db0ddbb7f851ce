#!/usr/bin/env bash
# suite_run_under.sh TEST [ARGS...]: the suite's `--run_under` (suite/.bazelrc). Bazel starts a
# test in its workspace's runfiles directory, which in suite/ is the suite's own
# ($TEST_SRCDIR/aoti_harness_suite); the harness's tests read their data by paths relative to
# the harness's ($TEST_SRCDIR/aoti_harness: testdata/corpus/mlp.pt2), where `bazel test` in
# the repository's root starts them. This runs the test there, with the arguments it has in
# the root.
set -euo pipefail
test="$1"
shift
case "$test" in
  /*) ;;
  *) test="$PWD/$test" ;;
esac
cd "$TEST_SRCDIR/aoti_harness"
# The paths Bazel 4 gave the test's arguments ($(location), $(rootpath)) are relative to
# this workspace's runfiles directory, where every repository also lies under external/
# (external/aoti_harness/X, external/torch/python). From the harness's directory they are
# X and ../torch/python: a path that starts an argument, or follows its '=', ',' or ':'.
args=()
for a in "$@"; do
  args+=("$(sed -E 's#(^|[=,:])external/aoti_harness/#\1#g; s#(^|[=,:])external/#\1../#g' <<<"$a")")
done
exec "$test" "${args[@]}"
