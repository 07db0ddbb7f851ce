#!/usr/bin/env bash
# remote_cache.sh: a local BuildGrid server (the Remote Execution API's content-addressable
# store and action cache) for Bazel's --remote_cache, in its own virtualenv.
#
#   bash tools/remote_cache.sh install          # BuildGrid into $AOTI_BUILDGRID_VENV
#   bash tools/remote_cache.sh start [PORT]     # writes its config, starts it, waits until it answers
#       With AOTI_BUILDGRID_TLS=DIR it serves grpcs:// with DIR/server.crt and DIR/server.key,
#       and asks clients for a certificate signed by DIR/client_ca.crt where that exists.
#       With AOTI_BUILDGRID_AUTH=DIR every call must carry a JWT signed with DIR/secret
#       (HS256), and DIR/acl.yml (BuildGrid's ACL file) says which calls each subject may make.
#   bash tools/remote_cache.sh status           # running or not, and its address
#   bash tools/remote_cache.sh stop
#   bash tools/remote_cache.sh flags [grpc://HOST:PORT]
#       prints `--config=remote_cache --remote_cache=URL` when the server answers, else
#       nothing (and a warning on stderr): Bazel 4.2.3 fails a build whose remote cache is
#       down when it starts, so a CI job runs `bazel test $(bash tools/remote_cache.sh
#       flags URL) //...` and builds locally when the server is away.
#
# Then: bazel test --config=remote_cache --remote_cache=grpc://localhost:PORT //...
# The store lives in $AOTI_BUILDGRID_DIR (default ~/.cache/aoti_harness/buildgrid): cas/
# on disk, the action cache in the server's memory (an LRU of 100,000 entries), the
# server's log and pid beside them.
set -euo pipefail
VENV="${AOTI_BUILDGRID_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/aoti_harness/buildgrid-venv}"
DIR="${AOTI_BUILDGRID_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/aoti_harness/buildgrid}"
VERSION="0.4.4"

die() { echo "remote_cache: $*" >&2; exit 1; }

install() {
  if [[ -x "$VENV/bin/bgd" && "$("$VENV/bin/pip" show buildgrid 2>/dev/null)" == *"Version: $VERSION"* ]]; then
    return
  fi
  echo "remote_cache: installing BuildGrid $VERSION into $VENV"
  python3 -m venv "$VENV" || die "cannot make a virtualenv in $VENV (python3 -m venv; apt install python3-venv)"
  "$VENV/bin/pip" install -q "buildgrid==$VERSION" || die "pip install buildgrid==$VERSION failed (see above)"
}

port_of() { cat "$DIR/port" 2>/dev/null || echo ""; }

running() {
  [[ -f "$DIR/server.pid" ]] && kill -0 "$(cat "$DIR/server.pid")" 2>/dev/null
}

answers() {  # answers HOST PORT: the port accepts a connection
  (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

start() {
  local port="${1:-50051}"
  [[ "$port" =~ ^[0-9]+$ ]] || die "port '$port': expected a number"
  install
  if running; then
    [[ "$(port_of)" == "$port" ]] || die "a server already runs on port $(port_of) (stop it first)"
    echo "remote_cache: already running: grpc://localhost:$port"
    return
  fi
  answers 127.0.0.1 "$port" && die "port $port is taken by another process"
  mkdir -p "$DIR/cas"
  local channel="    insecure-mode: true"
  if [[ -n "${AOTI_BUILDGRID_TLS:-}" ]]; then
    local tls="$AOTI_BUILDGRID_TLS"
    [[ -f "$tls/server.crt" && -f "$tls/server.key" ]] || die "AOTI_BUILDGRID_TLS=$tls: expected server.crt and server.key there"
    channel="    insecure-mode: false
    credentials:
      tls-server-key: $tls/server.key
      tls-server-cert: $tls/server.crt"
    [[ -f "$tls/client_ca.crt" ]] && channel="$channel
      tls-client-certs: $tls/client_ca.crt"
  fi
  # AOTI_BUILDGRID_AUTH=DIR: BuildGrid's own access control. Every call carries a JWT
  # (HS256, signed with DIR/secret) and DIR/acl.yml says which calls each subject may make:
  # a reader's token that may only read is refused a write by the server itself.
  local authorization=""
  if [[ -n "${AOTI_BUILDGRID_AUTH:-}" ]]; then
    local auth="$AOTI_BUILDGRID_AUTH"
    [[ -f "$auth/secret" && -f "$auth/acl.yml" ]] || die "AOTI_BUILDGRID_AUTH=$auth: expected secret and acl.yml there"
    authorization="authorization:
  method: jwt
  algorithm: hs256
  secret: $auth/secret
  acl-config: $auth/acl.yml"
  fi
  cat >"$DIR/buildgrid.yml" <<EOF
description: aoti_harness's remote cache (tools/remote_cache.sh)
$authorization
server:
  - !channel
    address: "127.0.0.1:$port"
$channel
storages:
  - !disk-storage &cas
    path: $DIR/cas
caches:
  - !lru-action-cache &ac
    storage: *cas
    max-cached-refs: 100000
    allow-updates: true
    cache-failed-actions: false
instances:
  - name: ""
    services:
      - !action-cache
        cache: *ac
      - !cas
        storage: *cas
      - !bytestream
        storage: *cas
EOF
  echo "$port" >"$DIR/port"
  nohup "$VENV/bin/bgd" server start --pid-file "$DIR/server.pid" "$DIR/buildgrid.yml" >"$DIR/server.log" 2>&1 &
  echo $! >"$DIR/server.pid"
  for _ in $(seq 1 60); do
    if answers 127.0.0.1 "$port"; then
      echo "remote_cache: running: grpc${AOTI_BUILDGRID_TLS:+s}://localhost:$port (store $DIR/cas, log $DIR/server.log)"
      return
    fi
    running || { tail -20 "$DIR/server.log" >&2; die "the server exited (log above: $DIR/server.log)"; }
    sleep 1
  done
  tail -20 "$DIR/server.log" >&2
  die "the server does not answer on port $port after 60 s (log above)"
}

stop() {
  if ! running; then
    echo "remote_cache: not running"
    return
  fi
  local pid
  pid="$(cat "$DIR/server.pid")"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$DIR/server.pid"
  echo "remote_cache: stopped"
}

flags() {
  local url="${1:-grpc://localhost:$(port_of)}"
  [[ "$url" =~ ^grpcs?://([^:/]+):([0-9]+)$ ]] || die "'$url': expected grpc://HOST:PORT"
  local host="${BASH_REMATCH[1]}" port="${BASH_REMATCH[2]}"
  if answers "$host" "$port"; then
    echo "--config=remote_cache --remote_cache=$url"
  else
    echo "remote_cache: $url does not answer; building without the remote cache" >&2
  fi
}

case "${1:-}" in
  install) install ;;
  start) start "${2:-}" ;;
  stop) stop ;;
  flags) flags "${2:-}" ;;
  status) if running; then echo "remote_cache: running: grpc://localhost:$(port_of)"; else echo "remote_cache: not running"; exit 3; fi ;;
  *) die "usage: remote_cache.sh install | start [PORT] | status | stop | flags [grpc://HOST:PORT]" ;;
esac
