#!/usr/bin/env bash
# collect_failed_artifacts.sh: after `bazel test`, gather what the failed tests left for CI
# to upload: for each failed test (each failed shard), its test.xml and, where it wrote
# one, its outputs.zip (the harness' case and reduced repro), in a directory named after
# the test: //models:mlp_test -> DEST/models__mlp_test/, a shard -> ..._shard_2_of_3/.
# Passing tests are left out.
#
#   collect_failed_artifacts.sh DEST [WORKSPACE]     (WORKSPACE: default .)
#
# bazel-testlogs is a symlink into Bazel's output base; upload actions do not follow it,
# so the files are copied out of its real location. Prints one line per test collected
# and a count; exits 0 whether or not anything failed (2 on a usage error).
set -euo pipefail
dest="${1:-}"
workspace="${2:-.}"
if [ -z "$dest" ] || [ $# -gt 2 ]; then
  echo "usage: collect_failed_artifacts.sh DEST [WORKSPACE]" >&2
  exit 2
fi
cd "$workspace" || { echo "collect_failed_artifacts: no directory $workspace" >&2; exit 2; }
testlogs="$(bazel info bazel-testlogs 2>/dev/null)" ||
  { echo "collect_failed_artifacts: $workspace is not a Bazel workspace (bazel info failed)" >&2; exit 2; }
testlogs="$(readlink -f "$testlogs")"
mkdir -p "$dest"
count=0
while IFS= read -r -d '' xml; do
  rel="${xml#"$testlogs"/}"
  case "$rel" in */test_attempts/*) continue ;; esac  # earlier attempts of a flaky test
  # A failed test's test.xml holds a <failure> or an <error> (Bazel writes an <error> for
  # a test that crashed or timed out).
  grep -qE '<(failure|error)[ >/]' "$xml" || continue
  dir="$(dirname "$xml")"
  name="$(dirname "$rel")"
  name="${name//\//__}"
  mkdir -p "$dest/$name"
  cp "$xml" "$dest/$name/test.xml"
  [ -f "$dir/test.outputs/outputs.zip" ] && cp "$dir/test.outputs/outputs.zip" "$dest/$name/outputs.zip"
  echo "collected $name: $(ls "$dest/$name" | tr '\n' ' ')"
  count=$((count + 1))
done < <(find "$testlogs" -name test.xml -print0 | sort -z)
echo "collected the artifacts of $count failed test(s) into $dest"
