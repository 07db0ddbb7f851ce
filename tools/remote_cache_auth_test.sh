#!/usr/bin/env bash
# remote_cache_auth_test.sh: the server, not the client, decides who may write the shared
# compile cache. A local BuildGrid runs with its own access control (JWT, HS256; an ACL per
# subject): "ci-publisher" may make every call, "reader" only the calls that read. The
# compile cache's client, given each one's bearer token in a header file:
#
#   bash tools/remote_cache_auth_test.sh [PORT]
#
#   - the publisher stores an entry, and the reader reads it back whole;
#   - the reader's store is refused by the server (exit 4), and nothing it sent is readable;
#   - a call with no token, or a token signed with another secret, is refused.
#
# Run by tools/run_tests.sh after BuildGrid's install (about 20 s). docs/ci.md says how a
# team gives its publishing job the writer's credential and every other job the reader's.
source "$(dirname "${BASH_SOURCE[0]}")/bazel_env.sh"
source "$AOTI_ROOT/tools/remote_cache_test_env.sh"
remote_cache_test_begin remote_cache_auth_test "${1:-${AOTI_REMOTE_CACHE_AUTH_PORT:-50095}}"
export AOTI_BUILDGRID_AUTH="$WORK/auth"

auth="$AOTI_BUILDGRID_AUTH"
mkdir -p "$auth"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$auth/secret"
# BuildGrid's ACL: per instance (""), the calls each subject may make, by the name of the
# service method. The reader's are those a cache read makes; no Update*, BatchUpdateBlobs, Write.
cat >"$auth/acl.yml" <<'YAML'
"":
  allow:
    - subject: "^ci-publisher$"
    - subject: "^reader$"
      requests: [GetActionResult, FindMissingBlobs, BatchReadBlobs, Read, GetCapabilities, GetTree]
YAML
token() {  # token SUBJECT SECRET_FILE: a JWT for SUBJECT, an hour long, as a header file's line
  "$BUILDGRID_VENV/bin/python" - "$1" "$2" <<'PY'
import sys, time, jwt
secret = open(sys.argv[2]).read().strip()
print("Authorization: Bearer " + jwt.encode({"sub": sys.argv[1], "exp": int(time.time()) + 3600}, secret, "HS256"))
PY
}
token ci-publisher "$auth/secret" >"$WORK/publisher.header"
token reader "$auth/secret" >"$WORK/reader.header"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/other_secret"
token ci-publisher "$WORK/other_secret" >"$WORK/forged.header"
chmod 600 "$WORK"/*.header

bash "$AOTI_ROOT/tools/remote_cache.sh" start "$PORT"

client() { "$AOTI_PYTHON" "$AOTI_ROOT/tools/remote_compile_cache.py" "$@" --url "grpc://localhost:$PORT" --timeout 10; }
entry() {  # entry DIR: a cache entry of 1 MiB of random bytes
  mkdir -p "$1"
  printf '{"format": "aoti_harness.compile_cache/1", "ok": true, "phase": "done"}' >"$1/result.json"
  head -c $((1 << 20)) /dev/urandom >"$1/archive.pt2"
}
key() { printf 'auth test %s %s' "$1" "$(date +%s%N)" | sha256sum | cut -d' ' -f1; }
published="$(key published)" attempted="$(key attempted)"
entry "$WORK/published"
entry "$WORK/attempted"

set +e
client put --key "$published" --dir "$WORK/published" --header_file "$WORK/publisher.header" 2>"$WORK/put_publisher.err"
rc_put_publisher=$?
client get --key "$published" --out "$WORK/read_by_reader" --header_file "$WORK/reader.header" 2>"$WORK/get_reader.err"
rc_get_reader=$?
client put --key "$attempted" --dir "$WORK/attempted" --header_file "$WORK/reader.header" 2>"$WORK/put_reader.err"
rc_put_reader=$?
client get --key "$attempted" --out "$WORK/attempted_back" --header_file "$WORK/publisher.header" 2>"$WORK/get_attempted.err"
rc_get_attempted=$?
client get --key "$published" --out "$WORK/anonymous" 2>"$WORK/get_anonymous.err"
rc_anonymous=$?
client get --key "$published" --out "$WORK/forged" --header_file "$WORK/forged.header" 2>"$WORK/get_forged.err"
rc_forged=$?
set -e
echo "| call | exit | expected |"
echo "| --- | ---: | ---: |"
echo "| put, the publisher's token | $rc_put_publisher | 0 |"
echo "| get, the reader's token | $rc_get_reader | 0 |"
echo "| put, the reader's token | $rc_put_reader | 4 |"
echo "| get of what the reader tried to put | $rc_get_attempted | 3 (a miss) |"
echo "| get, no token | $rc_anonymous | 4 |"
echo "| get, a token signed with another secret | $rc_forged | 4 |"
[ "$rc_put_publisher" -eq 0 ] || fail "the publisher's put exited $rc_put_publisher: $(cat "$WORK/put_publisher.err")"
[ "$rc_get_reader" -eq 0 ] || fail "the reader's get exited $rc_get_reader: $(cat "$WORK/get_reader.err")"
cmp -s "$WORK/published/archive.pt2" "$WORK/read_by_reader/archive.pt2" || fail "the archive the reader read differs"
[ "$rc_put_reader" -eq 4 ] || fail "the reader's put exited $rc_put_reader, expected 4 (refused by the server): $(cat "$WORK/put_reader.err")"
grep -qiE "permission|denied|unauthori|unauthenticated" "$WORK/put_reader.err" ||
  fail "the reader's refused put does not say the server denied it: $(cat "$WORK/put_reader.err")"
[ "$rc_get_attempted" -eq 3 ] || fail "what the reader tried to store is readable (get exited $rc_get_attempted, expected 3, a miss)"
[ "$rc_anonymous" -eq 4 ] || fail "a call without a token exited $rc_anonymous, expected 4: $(cat "$WORK/get_anonymous.err")"
[ "$rc_forged" -eq 4 ] || fail "a token signed with another secret exited $rc_forged, expected 4: $(cat "$WORK/get_forged.err")"
echo "remote_cache_auth_test: PASS: the server refuses a reader's write, a missing token and a forged one; the publisher's entry is read whole"
