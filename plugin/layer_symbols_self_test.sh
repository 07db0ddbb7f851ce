#!/bin/bash
# The layer check checks: layer_symbols_test.sh fails on a file nm cannot read (it passed
# such a file before, taking nm's silence for "no forbidden symbols"), fails on a library
# of the plugin layer (it links gtest and reads gflags), and passes a core library.
# Usage: layer_symbols_self_test.sh CHECK NOT_AN_OBJECT --plugin FILE... --core FILE...
set -uo pipefail
check="$1" not_object="$2"
shift 2
plugin_libs=() core_libs=() into=""
for a in "$@"; do
  case "$a" in
    --plugin | --core) into="$a" ;;
    *) if [[ $into == --plugin ]]; then plugin_libs+=("$a"); else core_libs+=("$a"); fi ;;
  esac
done
failed=0
expect() {  # expect STATUS WHAT ARGS...
  local want="$1" what="$2"
  shift 2
  bash "$check" "$@" >"${TMPDIR:-/tmp}/out" 2>&1
  local got=$?
  if [[ $got != "$want" ]]; then
    echo "FAIL: $what: exit $got, expected $want" >&2
    cat "${TMPDIR:-/tmp}/out" >&2
    failed=1
  else
    echo "ok: $what (exit $got): $(tail -1 "${TMPDIR:-/tmp}/out")"
  fi
}
expect 1 "a file nm cannot read" gtest,gflags "$not_object"
expect 1 "a missing file" gtest,gflags "${TMPDIR:-/tmp}/no_such_library.a"
expect 1 "the plugin layer's own library" gtest,gflags "${plugin_libs[@]}"
expect 0 "a core library" gtest,gflags "${core_libs[@]}"
exit $failed
