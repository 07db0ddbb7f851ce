#!/bin/bash
# aoti_reduce runs the check through the gtest-free library (harness/check.h), so the
# binary carries no gtest code. A dependency on the gtest adapter would bring in
# testing::UnitTest and friends.
set -euo pipefail
binary="$1"
count=$(nm -C "$binary" | grep -c 'testing::' || true)
if [[ "$count" != 0 ]]; then
  echo "FAIL: $binary links gtest ($count testing:: symbols), e.g.:" >&2
  nm -C "$binary" | grep 'testing::' | head -5 >&2
  exit 1
fi
echo "PASS: $binary has no testing:: symbols"
