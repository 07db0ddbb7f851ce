#!/usr/bin/env bash
# remote_cache_test.sh: two CI machines sharing one remote cache, on one machine.
# Starts a local BuildGrid (tools/remote_cache.sh), copies the example repository and the
# harness to two places (two clone locations), and runs `bazel test //...` in each with its
# own output base and --config=remote_cache. From each run's execution log
# (--execution_log_json_file) it counts the AOTI packaging actions and the tests that ran
# here rather than came from a cache. The second run must execute none.
#
# What the machines share is the run's own: one model file of the copies
# (tiny_classifier.py) carries this run's mark (a comment) and every test a --test_env of it,
# so that machine a packages that model and runs every test anew, and machine b can only
# have them from the server. The other packages are the example's own (the same action keys
# as tools/run_example.sh's build of it), so a cold CI run compiles them once, here, and the
# example phase reuses them; in a cold run b has those from the server too. The harness's C++ is no part of the
# proof, and is not built twice for it: machine a reads and writes the suite's disk cache
# (in a cold CI run it builds the C++ that the real-model corpus and the example then
# reuse), and machine b's disk cache is a copy of that cache as it was before machine a ran
# (hard links: a cold run's holds none of it, and b takes it from the server).
# Prints a table: run, wall time, packaging actions run / from the cache, tests run / from
# the cache. Exits 1 when the second run executed a packaging action or a test.
#
# Then the reducer's compile cache behind the same server: the failing demo
# (//:failing_demo_test, a planted relu bug) reduced on machine a, which publishes
# (AOTI_REMOTE_CACHE_UPLOAD=1), and then on machine b, which only reads, each with a compile
# cache directory of its own, empty (--aoti_remote_cache through AOTI_REMOTE_CACHE). Machine b must make 0 compiles, every one served by the remote cache,
# and reach the same repro. With AOTI_REMOTE_CACHE_TEST_KILL=1, a third reduction (machine b,
# another empty directory) has the server killed after its first remote hit: it must end
# with the same repro, compiling the rest itself, and Bazel must not fail the build.
source "$(dirname "${BASH_SOURCE[0]}")/bazel_env.sh"
test_start=$(date +%s)
PORT="${AOTI_REMOTE_CACHE_TEST_PORT:-50093}"
WORK="${AOTI_REMOTE_CACHE_TEST_DIR:-${TMPDIR:-/tmp}/aoti_remote_cache_test}"
rm -rf "$WORK" && mkdir -p "$WORK"
export AOTI_BUILDGRID_DIR="$WORK/buildgrid"
bash "$AOTI_ROOT/tools/remote_cache.sh" start "$PORT"
trap 'bash "$AOTI_ROOT/tools/remote_cache.sh" stop >/dev/null' EXIT

# One copy of the harness and the example per "machine", at different paths.
copy() {
  local dest="$1"
  mkdir -p "$dest"
  (cd "$AOTI_ROOT" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$dest"
}

count() {  # count LOG MNEMONIC: "executed cached" spawns of that mnemonic
  "$AOTI_PYTHON" - "$1" "$2" <<'PY'
import json, sys
path, mnemonic = sys.argv[1:]
text = open(path).read()
dec, i, run, hit = json.JSONDecoder(), 0, 0, 0
while i < len(text):
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    spawn, i = dec.raw_decode(text, i)
    if spawn.get("mnemonic") != mnemonic:
        continue
    if spawn.get("remoteCacheHit"):
        hit += 1
    else:
        run += 1
print(run, hit)
PY
}

# This run's mark, the model file that carries it, and machine b's disk cache: the suite's as
# it is now, before machine a.
mark="remote-cache-test-$(date +%s%N)"
MARKED_MODEL=tiny_classifier.py
mkdir -p "$AOTI_BAZEL_DISK_CACHE"
# (Another build may be writing that cache meanwhile, CI's fuzz smoke beside this test: an
# entry that moves while it is linked is left out, which only leaves b more to fetch.)
cp -al "$AOTI_BAZEL_DISK_CACHE" "$WORK/disk_cache_b" 2>/dev/null || true
declare -A disk_cache=([a]="$AOTI_BAZEL_DISK_CACHE" [b]="$WORK/disk_cache_b")
read -r -a shared_flags <<<"$(bazel_shared_flags)"

rows=()
for machine in a b; do
  copy "$WORK/$machine"
  repo="$WORK/$machine/examples/model_repo"
  printf '\n# %s\n' "$mark" >>"$repo/$MARKED_MODEL"
  start=$(date +%s)
  set +e
  (cd "$repo" && bazel --output_base="$WORK/output_base_$machine" test //... --config=remote_cache \
    --remote_cache="grpc://localhost:$PORT" --disk_cache="${disk_cache[$machine]}" --repo_env=AOTI_PYTHON="$AOTI_PYTHON" \
    "${shared_flags[@]}" --test_env=AOTI_REMOTE_CACHE_TEST_RUN="$mark" \
    --execution_log_json_file="$WORK/exec_$machine.json" >"$WORK/bazel_$machine.log" 2>&1)
  rc=$?
  set -e
  seconds=$(($(date +%s) - start))
  (cd "$repo" && bazel --output_base="$WORK/output_base_$machine" shutdown >/dev/null 2>&1) || true
  [ "$rc" -eq 0 ] || { tail -30 "$WORK/bazel_$machine.log"; echo "remote_cache_test: FAIL: run $machine exited $rc"; exit 1; }
  read -r pkg_run pkg_hit < <(count "$WORK/exec_$machine.json" AotiPackage)
  read -r test_run test_hit < <(count "$WORK/exec_$machine.json" TestRunner)
  rows+=("| $machine | $seconds s | $pkg_run | $pkg_hit | $test_run | $test_hit |")
done
echo "| run | wall | packaging run | packaging from the cache | tests run | tests from the cache |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
printf '%s\n' "${rows[@]}"
read -r a_pkg_run _ < <(count "$WORK/exec_a.json" AotiPackage)
if [ "$a_pkg_run" -lt 1 ]; then
  echo "remote_cache_test: FAIL: the first machine ran no packaging action ($MARKED_MODEL carries this run's mark: its package is new)"
  exit 1
fi
read -r pkg_run _ < <(count "$WORK/exec_b.json" AotiPackage)
read -r test_run _ < <(count "$WORK/exec_b.json" TestRunner)
if [ "$pkg_run" -ne 0 ] || [ "$test_run" -ne 0 ]; then
  echo "remote_cache_test: FAIL: the second machine ran $pkg_run packaging actions and $test_run tests"
  exit 1
fi
echo "remote_cache_test: the second machine ran no packaging action and no test"

# --- the reducer's compile cache behind the server ---
reduce_demo() {  # reduce_demo MACHINE NAME [UPLOAD]: the demo's reduction; prints its figures' line
  local machine="$1" name="$2" cache="$WORK/compile_cache_$2" upload="${3:-0}"
  mkdir -p "$cache"
  local start rc
  start=$(date +%s)
  set +e
  (cd "$WORK/$machine/examples/model_repo" && bazel --output_base="$WORK/output_base_$machine" test \
    //:failing_demo_test --config=remote_cache --remote_cache="grpc://localhost:$PORT" --disk_cache="${disk_cache[$machine]}" \
    --repo_env=AOTI_PYTHON="$AOTI_PYTHON" "${shared_flags[@]}" --test_env=AOTI_REMOTE_CACHE_TEST_RUN="$mark" \
    --nocache_test_results --test_env=DUMP_AOTI_MINIFIER=1 --test_env=AOTI_REDUCE_STANDALONE_VERIFY=0 \
    --test_env=AOTI_REMOTE_CACHE="grpc://localhost:$PORT" --test_env=AOTI_REMOTE_CACHE_UPLOAD="$upload" \
    --test_env=AOTI_COMPILE_CACHE_DIR="$cache" \
    --sandbox_writable_path="$cache" >"$WORK/reduce_$name.log" 2>&1)
  rc=$?
  set -e
  local seconds=$(($(date +%s) - start))
  [ "$rc" -eq 3 ] || { tail -30 "$WORK/reduce_$name.log"; echo "remote_cache_test: FAIL: reduction $name: bazel exited $rc, expected 3 (the planted failure)"; exit 1; }
  rm -rf "$WORK/zip_$name" && mkdir -p "$WORK/zip_$name"
  unzip -q -o "$WORK/$machine/examples/model_repo/bazel-testlogs/failing_demo_test/test.outputs/outputs.zip" -d "$WORK/zip_$name"
  local summary
  summary="$(find "$WORK/zip_$name" -name summary.json | head -1)"
  [ -n "$summary" ] || { echo "remote_cache_test: FAIL: reduction $name left no summary.json"; exit 1; }
  "$AOTI_PYTHON" - "$summary" "$name" "$seconds" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(sys.argv[2], sys.argv[3], s["compiles"], s["disk_cache_hits"], s.get("remote_cache_hits", 0),
      s.get("remote_cache_stores", 0), s["nodes_after"], ",".join(s["ops"]) or "-",
      (s.get("remote_cache_problem") or "-").replace(" ", "_")[:80])
PY
}

# Machine a publishes (AOTI_REMOTE_CACHE_UPLOAD=1, a trusted CI job); b and the killed run
# only read. (repro_standalone.py is written and not run alone here: its run is an AOTI
# compile outside the compile cache, which tools/run_example.sh proves.)
reductions=("$(reduce_demo a a 1)" "$(reduce_demo b b)")
if [ "${AOTI_REMOTE_CACHE_TEST_KILL:-0}" = 1 ]; then
  # The server goes once the reduction took its first entry from it.
  ( for _ in $(seq 1200); do
      if compgen -G "$WORK/compile_cache_killed/??/*/result.json" >/dev/null; then
        bash "$AOTI_ROOT/tools/remote_cache.sh" stop >/dev/null; exit 0
      fi
      sleep 0.5
    done ) &
  killer=$!
  reductions+=("$(reduce_demo b killed)")
  wait "$killer" || true
fi
echo
echo "| reduction | wall | compiles | from the compile caches | of them remote | uploaded | nodes after | ops | remote cache left because |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"
for r in "${reductions[@]}"; do
  read -r name seconds compiles hits remote stores nodes ops problem <<<"$r"
  echo "| $name | $seconds s | $compiles | $hits | $remote | $stores | $nodes | $ops | ${problem//_/ } |"
done
read -r _ _ a_compiles _ _ a_stores a_nodes a_ops _ <<<"${reductions[0]}"
read -r _ _ b_compiles b_hits b_remote _ b_nodes b_ops _ <<<"${reductions[1]}"
problems=()
[ "$a_compiles" -gt 0 ] && [ "$a_stores" -gt 0 ] || problems+=("machine a compiled $a_compiles and uploaded $a_stores; expected both above 0")
[ "$b_compiles" -eq 0 ] || problems+=("machine b compiled $b_compiles candidates; expected 0")
[ "$b_remote" -gt 0 ] && [ "$b_remote" -eq "$b_hits" ] || problems+=("machine b: $b_remote of $b_hits hits from the remote cache; expected all, and some")
[ "$b_nodes $b_ops" = "$a_nodes $a_ops" ] || problems+=("machine b reduced to '$b_nodes $b_ops', machine a to '$a_nodes $a_ops'")
if [ "${#reductions[@]}" -eq 3 ]; then
  read -r _ _ k_compiles _ k_remote k_stores k_nodes k_ops k_problem <<<"${reductions[2]}"
  [ "$k_stores" -eq 0 ] || problems+=("a reader uploaded $k_stores entries; expected none (read only without AOTI_REMOTE_CACHE_UPLOAD=1)")
  [ "$k_nodes $k_ops" = "$a_nodes $a_ops" ] || problems+=("with the server killed: reduced to '$k_nodes $k_ops', expected '$a_nodes $a_ops'")
  [ "$k_problem" != "-" ] || problems+=("with the server killed: the reduction did not notice")
  [ "$k_remote" -gt 0 ] && [ "$k_compiles" -gt 0 ] || problems+=("with the server killed: $k_remote remote hits and $k_compiles compiles; expected both above 0")
fi
if [ "${#problems[@]}" -gt 0 ]; then
  printf 'remote_cache_test: FAIL: %s\n' "${problems[@]}"
  exit 1
fi
echo "remote_cache_test: PASS: the second machine ran no packaging action and no test, and its reduction compiled nothing ($(($(date +%s) - test_start)) s in all)"
