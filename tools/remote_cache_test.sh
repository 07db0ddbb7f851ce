#!/usr/bin/env bash
# remote_cache_test.sh: two CI machines sharing one remote cache, on one machine.
# Starts a local BuildGrid (tools/remote_cache.sh), copies the example repository and the
# harness to two places (two clone locations), and runs `bazel test //...` in each with its
# own output base, an empty disk cache and --config=remote_cache. From each run's
# execution log (--execution_log_json_file) it counts the AOTI packaging actions and the
# tests that ran here rather than came from the cache. The second run must execute none.
# Prints a table: run, wall time, packaging actions run / from the cache, tests run / from
# the cache. Exits 1 when the second run executed a packaging action or a test.
source "$(dirname "${BASH_SOURCE[0]}")/bazel_env.sh"
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

rows=()
for machine in a b; do
  copy "$WORK/$machine"
  repo="$WORK/$machine/examples/model_repo"
  start=$(date +%s)
  set +e
  (cd "$repo" && bazel --output_base="$WORK/output_base_$machine" test //... --config=remote_cache \
    --remote_cache="grpc://localhost:$PORT" --disk_cache= --repo_env=AOTI_PYTHON="$AOTI_PYTHON" \
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
read -r pkg_run _ < <(count "$WORK/exec_b.json" AotiPackage)
read -r test_run _ < <(count "$WORK/exec_b.json" TestRunner)
if [ "$pkg_run" -ne 0 ] || [ "$test_run" -ne 0 ]; then
  echo "remote_cache_test: FAIL: the second machine ran $pkg_run packaging actions and $test_run tests"
  exit 1
fi
echo "remote_cache_test: PASS: the second machine ran no packaging action and no test"
