#!/usr/bin/env bash
# remote_cache_tls_test.sh: the remote compile cache's client against a local BuildGrid
# serving grpcs:// that asks clients for a certificate (mutual TLS), and its messages
# against BuildGrid's own generated Remote Execution API classes.
#
#   bash tools/remote_cache_tls_test.sh [PORT]
#
# A CA, a server certificate for localhost and a client certificate are made with openssl
# in a scratch directory. With the CA and the client certificate an entry is stored and read
# back whole; without the client certificate, or trusting only the system's roots, the
# client fails with the server's refusal (exit 4), never a hit. Run by tools/run_tests.sh
# after BuildGrid's install (about 20 s).
source "$(dirname "${BASH_SOURCE[0]}")/bazel_env.sh"
source "$AOTI_ROOT/tools/remote_cache_test_env.sh"
remote_cache_test_begin remote_cache_tls_test "${1:-${AOTI_REMOTE_CACHE_TLS_PORT:-50094}}"
export AOTI_BUILDGRID_TLS="$WORK/tls"

"$BUILDGRID_VENV/bin/python" "$AOTI_ROOT/tools/remote_cache_messages_test.py" 2>&1 | tail -3

# Certificates: a CA, the server's (localhost) and a client's, each signed by the CA.
tls="$AOTI_BUILDGRID_TLS"
mkdir -p "$tls"
(
  cd "$tls"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=aoti test CA" -keyout ca.key -out ca.crt 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout server.key -out server.csr 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >server.ext
  openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext -out server.crt 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=aoti ci client" -keyout client.key -out client.csr 2>/dev/null
  openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out client.crt 2>/dev/null
  cp ca.crt client_ca.crt
)
bash "$AOTI_ROOT/tools/remote_cache.sh" start "$PORT"

client() { "$AOTI_PYTHON" "$AOTI_ROOT/tools/remote_compile_cache.py" "$@" --url "grpcs://localhost:$PORT" --timeout 10; }
entry="$WORK/entry" got="$WORK/got"
mkdir -p "$entry"
printf '{"format": "aoti_harness.compile_cache/1", "ok": true, "phase": "done"}' >"$entry/result.json"
head -c $((3 << 20)) /dev/urandom >"$entry/archive.pt2"
key="$(printf 'tls test %s' "$(date +%s%N)" | sha256sum | cut -d' ' -f1)"

set +e
client put --key "$key" --dir "$entry" --ca_cert "$tls/ca.crt" --client_cert "$tls/client.crt" --client_key "$tls/client.key"
rc_put=$?
client get --key "$key" --out "$got" --ca_cert "$tls/ca.crt" --client_cert "$tls/client.crt" --client_key "$tls/client.key"
rc_get=$?
client get --key "$key" --out "$WORK/no_client_cert" --ca_cert "$tls/ca.crt" 2>"$WORK/no_client_cert.err"
rc_anonymous=$?
client get --key "$key" --out "$WORK/system_roots" --client_cert "$tls/client.crt" --client_key "$tls/client.key" \
  2>"$WORK/system_roots.err"
rc_roots=$?
set -e
echo "| call | exit | expected |"
echo "| --- | ---: | ---: |"
echo "| put, with the CA and the client certificate | $rc_put | 0 |"
echo "| get, with the CA and the client certificate | $rc_get | 0 |"
echo "| get, without a client certificate | $rc_anonymous | 4 |"
echo "| get, trusting the system's roots only | $rc_roots | 4 |"
[ "$rc_put" -eq 0 ] || fail "put over mutual TLS exited $rc_put"
[ "$rc_get" -eq 0 ] || fail "get over mutual TLS exited $rc_get"
cmp -s "$entry/archive.pt2" "$got/archive.pt2" || fail "the archive read back differs from the one stored"
[ "$rc_anonymous" -eq 4 ] || fail "a client without a certificate got exit $rc_anonymous, expected 4 (refused): $(cat "$WORK/no_client_cert.err")"
[ "$rc_roots" -eq 4 ] || fail "a client not trusting the test CA got exit $rc_roots, expected 4: $(cat "$WORK/system_roots.err")"
[ ! -e "$WORK/no_client_cert/archive.pt2" ] && [ ! -e "$WORK/system_roots/archive.pt2" ] || fail "a refused client wrote an entry"
echo "remote_cache_tls_test: PASS: mutual TLS stores and reads whole entries; no certificate, or the wrong roots, is refused"
