#!/usr/bin/env bash
# remote_cache_test_env.sh: sourced by the tests that run a BuildGrid of their own
# (remote_cache_tls_test.sh, remote_cache_auth_test.sh), after bazel_env.sh.
#
#   remote_cache_test_begin NAME PORT
#
# sets PORT, BUILDGRID_VENV (BuildGrid's virtualenv, whose Python has grpc and PyJWT),
# WORK (a scratch directory, removed on exit with the server stopped) and
# AOTI_BUILDGRID_DIR (the server's store and log, in WORK), and defines fail MESSAGE
# (prints "NAME: FAIL: MESSAGE" and exits 1).
set -euo pipefail

remote_cache_test_begin() {
  REMOTE_CACHE_TEST_NAME="$1"
  PORT="$2"
  BUILDGRID_VENV="${AOTI_BUILDGRID_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/aoti_harness/buildgrid-venv}"
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/aoti_${1}.XXXXXX")"
  export AOTI_BUILDGRID_DIR="$WORK/buildgrid"
  trap 'bash "$AOTI_ROOT/tools/remote_cache.sh" stop >/dev/null 2>&1; rm -rf "$WORK"' EXIT
}

fail() { echo "$REMOTE_CACHE_TEST_NAME: FAIL: $*" >&2; exit 1; }
