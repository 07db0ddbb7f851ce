#!/usr/bin/env bash
# reducer_vs_upstream.sh: aoti_reduce against PyTorch's own AOTI minifier on the same
# failing programs, both run here one after the other; prints a markdown table.
#   bash bench/reducer_vs_upstream.sh [SCENARIO...]   (default: all below)
# Scenario = package in testdata/reduce, model file, config patches, upstream accuracy mode.
source "$(dirname "${BASH_SOURCE[0]}")/../tools/bazel_env.sh"
cd "$AOTI_ROOT"
bazel_cmd build //reducer:aoti_reduce //harness:aoti_runner //testdata/reduce:scenarios \
  //testdata/custom_ops:test_ops_for_python.so >/dev/null
bin="$(bazel info bazel-bin)"
oplib="$bin/testdata/custom_ops/test_ops_for_python.so"
declare -A MODEL CONFIG MODE
add() { MODEL[$1]=$2; CONFIG[$1]=$3; MODE[$1]=$4; }
R=cpp.inject_relu_bug_TESTING_ONLY
L=cpp.inject_log1p_bug_TESTING_ONLY
add relu_cos_compile_error relu_cos "{\"$R\": \"compile_error\"}" none
add relu_cos_accuracy relu_cos "{\"$R\": \"accuracy\"}" accuracy
add log1p_relu_where log1p_relu_where "{\"$R\": \"accuracy\", \"$L\": \"accuracy\"}" accuracy
add block_compile_error block "{\"$R\": \"compile_error\"}" none
add block_relu_accuracy block "{\"$R\": \"accuracy\"}" accuracy
add block_log1p_accuracy block "{\"$L\": \"accuracy\"}" accuracy
add block_runtime_error block "{\"$R\": \"runtime_error\"}" none
add crash_block crash_block "{}" none
scenarios=("$@")
((${#scenarios[@]})) || scenarios=(relu_cos_compile_error relu_cos_accuracy log1p_relu_where block_compile_error
                                   block_relu_accuracy block_log1p_accuracy block_runtime_error crash_block)
tmp="${BENCH_LOG_DIR:-$(mktemp -d)}"
mkdir -p "$tmp"
echo "logs and artifacts: $tmp" >&2
# "nodes" count operator nodes (call_function); upstream's own log counts placeholders too.
echo "| scenario | nodes | aoti_reduce: nodes after / compiles / s | upstream: nodes after / compiles / s |"
echo "| --- | ---: | --- | --- |"
for s in "${scenarios[@]}"; do
  ours="$(cd "$bin/reducer/aoti_reduce.runfiles/aoti_harness" && \
          "$bin/reducer/aoti_reduce" minify --package="$bin/testdata/reduce/$s.pt2" \
          --out="$tmp/$s" --aoti_runner="$bin/harness/aoti_runner" --aoti_op_libraries="$oplib" \
          --aoti_runner_env=AOTI_TEST_NULL_DEREF=1 --python="$AOTI_PYTHON" 2>"$tmp/$s.ours.log" | head -1 || true)"
  # reduced accuracy from 27 to 1 nodes with 9 compiles (5 cache hits) in 55.2 s
  read -r before after compiles secs <<<"$(sed -E 's/.* from ([0-9]+) to ([0-9]+) nodes with ([0-9]+) compiles.* in ([0-9.]+) s/\1 \2 \3 \4/' <<<"$ours")"
  lib=""
  [ "${MODEL[$s]}" = crash_block ] && lib="$oplib"
  set +e
  mkdir -p "$tmp/$s.upstream"  # upstream writes repro.py and torch_compile_debug/ into its cwd
  (cd "$tmp/$s.upstream" && AOTI_TEST_NULL_DEREF=1 timeout 3600 "$AOTI_PYTHON" "$AOTI_ROOT/bench/upstream_minifier.py" \
    "$AOTI_ROOT/testdata/reduce/${MODEL[$s]}.py" "${CONFIG[$s]}" "${MODE[$s]}" $lib) >"$tmp/$s.up.json" 2>"$tmp/$s.up.log"
  rc=$?
  set -e
  if [ $rc -eq 0 ] && [ -s "$tmp/$s.up.json" ]; then
    up="$("$AOTI_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print("%s / %s / %s" % (d.get("nodes_after", "?"), d.get("queries", "?"), d["seconds"]))' "$tmp/$s.up.json")"
  elif [ $rc -gt 128 ]; then
    up="crashed: killed by signal $((rc - 128)) (the minifier runs candidates in its own process)"
  else
    up="failed (exit $rc): $(grep -E 'Error|error' "$tmp/$s.up.log" | tail -1 | cut -c1-120)"
  fi
  echo "| $s | $before | $after / $compiles / $secs | $up |"
done
