#!/bin/bash
# The layers by their symbols: the files given (static archives or binaries) define and
# reference no symbol of the layers named in the first argument, a comma-separated list
# of gtest (testing::) and gflags (gflags::, google::ParseCommandLineFlags, a FLAGS_
# variable, glog's own included). The core libraries (//harness, //reducer) are checked
# for both; the aoti_reduce CLI, which parses flags, for gtest.
set -euo pipefail
forbidden="$1"
shift
patterns=()
for layer in ${forbidden//,/ }; do
  case "$layer" in
    gtest) patterns+=('testing::') ;;
    gflags) patterns+=('gflags::' 'google::ParseCommandLineFlags' 'google::FlagRegisterer' 'fL[A-Z0-9]*::FLAGS_') ;;
    *) echo "layer_symbols_test: unknown layer '$layer' (expected gtest or gflags)" >&2; exit 2 ;;
  esac
done
regex=$(IFS='|'; echo "${patterns[*]}")
if [[ $# == 0 ]]; then
  echo "layer_symbols_test: no files to check" >&2
  exit 2
fi
failed=0
err="$(mktemp)"
trap 'rm -f "$err"' EXIT
for file in "$@"; do
  # nm must read the file: a file it cannot read (not an object, missing, nm absent) is a
  # failure, never a pass with no symbols found.
  if ! symbols=$(nm -C "$file" 2>"$err"); then
    echo "FAIL: nm cannot read $file: $(head -3 "$err")" >&2
    failed=1
    continue
  fi
  if [[ -z "$symbols" ]]; then
    echo "FAIL: nm found no symbols in $file (expected a library or binary with code)" >&2
    failed=1
    continue
  fi
  hits=$(grep -E "$regex" <<<"$symbols" || true)
  if [[ -n "$hits" ]]; then
    echo "FAIL: $file has $(wc -l <<<"$hits") symbols of $forbidden, e.g.:" >&2
    head -5 <<<"$hits" >&2
    failed=1
  fi
done
[[ $failed == 0 ]] || exit 1
echo "PASS: $# files have no symbols of $forbidden"
