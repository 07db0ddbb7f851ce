#!/usr/bin/env bash
# reducer_vs_upstream.sh: aoti_reduce against PyTorch's own AOTI minifier on the same
# failing programs (bench/bench.py has the list: 12 programs, 2 to 313 nodes, every planted
# class, two bugs deep in the middle of a 313-node stack, a dynamic batch, a real
# transformers model), one after the other on this machine; writes bench/RESULTS.md.
#
#   bash bench/reducer_vs_upstream.sh            # all (hours: upstream's minifier is slow)
#   bash bench/reducer_vs_upstream.sh --subset   # three small programs, about 10 minutes;
#                                                # writes bench/RESULTS-subset.md
#   bash bench/reducer_vs_upstream.sh PROGRAM... # some; writes bench/RESULTS-some.md
#
# $BENCH_WORK_DIR keeps the packages, logs and both sides' repros (default: a temp dir).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../tools/bazel_env.sh"
cd "$AOTI_ROOT"
bazel_cmd build //reducer:aoti_reduce //harness:aoti_runner //testdata/custom_ops:test_ops_for_python.so >/dev/null
bin="$(bazel info bazel-bin 2>/dev/null)"
out=bench/RESULTS.md
args=()
if [ "${1:-}" = --subset ]; then
  out=bench/RESULTS-subset.md
  args+=(--subset)
  shift
elif (($#)); then
  out=bench/RESULTS-some.md
fi
exec "$AOTI_PYTHON" bench/bench.py --bin "$bin" --python "$AOTI_PYTHON" --out "$out" \
  --op-library "$bin/testdata/custom_ops/test_ops_for_python.so" ${BENCH_WORK_DIR:+--work "$BENCH_WORK_DIR"} \
  "${args[@]}" "$@"
