#!/usr/bin/env bash
# Bazel's timeout, for real: a failing model test run with DUMP_AOTI_MINIFIER=1 gets
# SIGTERM while its reduction waits on a compile (a compile server that never answers).
# Afterwards: the premature-exit file is still there (Bazel then knows the test did not
# finish), the failing case written before the reduction is complete, no half-written
# repro exists, and no process the test started is left.
# Usage: sigterm_test.sh TEST_BINARY PACKAGE RUNNER PYTHON FAKE_SERVER
set -uo pipefail
binary="$1" package="$2" runner="$3" python="$4" server="$5"
work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/sigterm.XXXXXX")"
out="$work/outputs"
mkdir -p "$out"
echo hang >"$work/mode"
fail() { echo "FAIL: $*"; tail -40 "$work/log.txt"; exit 1; }

TEST_UNDECLARED_OUTPUTS_DIR="$out" TEST_PREMATURE_EXIT_FILE="$work/premature_exit" DUMP_AOTI_MINIFIER=1 \
  FAKE_SERVER_MODE_FILE="$work/mode" FAKE_SERVER_PID_FILE="$work/server_pids" XML_OUTPUT_FILE="" \
  "$binary" --aoti_package="$package" --aoti_runner="$runner" --aoti_python="$python" \
  --aoti_compile_server="$server" >"$work/log.txt" 2>&1 &
test_pid=$!
for _ in $(seq 1 600); do
  [ -s "$work/server_pids" ] && break
  kill -0 "$test_pid" 2>/dev/null || fail "the test ended before its reduction started"
  sleep 0.2
done
[ -s "$work/server_pids" ] || fail "the reduction did not start its compile server within 120 s"
sleep 1  # the compile request is on its way; the server will never answer it
[ -f "$work/premature_exit" ] || fail "gtest did not create the premature-exit file"
kill -TERM "$test_pid"
wait "$test_pid"
rc=$?
[ "$rc" -eq 143 ] || fail "the test exited with $rc; expected 143 (SIGTERM)"

[ -f "$work/premature_exit" ] || fail "the premature-exit file was removed: Bazel would think the test finished"
case_dir="$out/aoti/AotiModel.CompiledMatchesEager"
"$python" -c "import json, sys; c = json.load(open(sys.argv[1])); assert c['failure_class'] == 'accuracy', c" \
  "$case_dir/case.json" || fail "case.json is missing or incomplete"
[ -f "$case_dir/original.pt2" ] || fail "the case has no original.pt2"
leftovers="$(find "$out" -name '*.partial' -o -name 'repro.py' -o -name 'repro.pt2')"
[ -z "$leftovers" ] || fail "half a repro was left: $leftovers"
server_pid="$(head -1 "$work/server_pids")"
for _ in $(seq 1 100); do
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.05
done
kill -0 "$server_pid" 2>/dev/null && fail "the compile server ($server_pid) outlived the test"
if grep -l "FAKE_SERVER_MODE_FILE=$work/mode" /proc/[0-9]*/environ 2>/dev/null | grep -v "/proc/$$/" | grep -q .; then
  fail "a process the test started is still running"
fi
echo "sigterm: 1 passed, 0 failed"
