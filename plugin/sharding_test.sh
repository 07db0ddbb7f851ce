#!/usr/bin/env bash
# sharding_test: the harness' test main under Bazel's sharding protocol alone
# (TEST_TOTAL_SHARDS, TEST_SHARD_INDEX, TEST_SHARD_STATUS_FILE, and no GTEST_* variable, as
# a Bazel whose wrapper does not translate them gives it): in 3 shards, each of the probe's
# 7 checks runs exactly once, and every shard touches its status file.
set -euo pipefail
probe="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
ran="$tmp/ran.txt"
: >"$ran"
for shard in 0 1 2; do
  status="$tmp/shard_$shard.status"
  rm -f "$status"
  env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX -u GTEST_SHARD_STATUS_FILE \
    TEST_TOTAL_SHARDS=3 TEST_SHARD_INDEX="$shard" TEST_SHARD_STATUS_FILE="$status" \
    "$probe" >"$tmp/shard_$shard.log" 2>&1 || { echo "shard $shard failed:"; cat "$tmp/shard_$shard.log"; exit 1; }
  [ -f "$status" ] || { echo "FAIL: shard $shard did not touch TEST_SHARD_STATUS_FILE"; exit 1; }
  n="$(grep -c '^\[ RUN      \]' "$tmp/shard_$shard.log" || true)"
  echo "shard $shard: $n checks"
  [ "$n" -ge 1 ] || { echo "FAIL: shard $shard ran no check"; exit 1; }
  grep '^\[ RUN      \]' "$tmp/shard_$shard.log" | sed 's/^\[ RUN      \] //' >>"$ran"
done
total="$(wc -l <"$ran")"
distinct="$(sort -u "$ran" | wc -l)"
[ "$total" -eq 7 ] && [ "$distinct" -eq 7 ] ||
  { echo "FAIL: $total checks ran in all, $distinct distinct; expected each of 7 exactly once"; sort "$ran"; exit 1; }
# Given GTEST_* already (the usual Bazel wrapper), the test main leaves them as they are.
env GTEST_TOTAL_SHARDS=1 GTEST_SHARD_INDEX=0 TEST_TOTAL_SHARDS=3 TEST_SHARD_INDEX=1 \
  TEST_SHARD_STATUS_FILE="$tmp/given.status" "$probe" >"$tmp/given.log" 2>&1
n="$(grep -c '^\[ RUN      \]' "$tmp/given.log" || true)"
[ "$n" -eq 7 ] || { echo "FAIL: with GTEST_TOTAL_SHARDS=1 given, $n checks ran, expected all 7"; exit 1; }
echo "sharding_test: ok (7 checks in 3 shards, each exactly once; every status file touched)"
