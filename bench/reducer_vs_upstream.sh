#!/usr/bin/env bash
# reducer_vs_upstream.sh: aoti_reduce against PyTorch's own AOTI minifier on the same
# failing programs (bench/bench.py has the list: 12 programs, 2 to 313 nodes, every planted
# class, two bugs deep in the middle of a 313-node stack, a dynamic batch, a real
# transformers model), one after the other on this machine; writes bench/RESULTS.md.
#
#   bash bench/reducer_vs_upstream.sh            # all, every run cold (35 min on 2 cores)
#   bash bench/reducer_vs_upstream.sh --subset   # three small programs, about 10 minutes;
#                                                # writes bench/RESULTS-subset.md
#   bash bench/reducer_vs_upstream.sh --control-flow  # a cond, a while_loop and a boolean
#                                                # mask; writes bench/RESULTS-control-flow.md
#   bash bench/reducer_vs_upstream.sh PROGRAM... # some; writes bench/RESULTS-some.md
#   bash bench/reducer_vs_upstream.sh --warm-machine  # all, both sides starting with
#                                                # inductor's precompiled headers built (a
#                                                # machine that has compiled before);
#                                                # writes bench/RESULTS-warm-machine.md
#
# $BENCH_WORK_DIR keeps the packages, logs and both sides' repros (default: a temp dir).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../tools/bazel_env.sh"
cd "$AOTI_ROOT"
bazel_cmd build //plugin:aoti_reduce //harness/runner:aoti_runner //testdata/custom_ops:test_ops_for_python.so >/dev/null
bin="$(bazel info bazel-bin 2>/dev/null)"
# Which report: the subset's, some programs', or the whole benchmark's (options such as
# --timeout N pass through to bench.py and choose nothing).
out=bench/RESULTS.md
prev=""
for a in "$@"; do
  case "$a" in
    --subset) out=bench/RESULTS-subset.md ;;
    --control-flow) out=bench/RESULTS-control-flow.md ;;
    --warm-machine) [ "$out" != bench/RESULTS.md ] || out=bench/RESULTS-warm-machine.md ;;
    --*) ;;
    *) [[ "$prev" == --timeout || "$prev" == --work ]] ||
         [[ "$out" == bench/RESULTS-subset.md || "$out" == bench/RESULTS-control-flow.md ]] || out=bench/RESULTS-some.md ;;
  esac
  prev="$a"
done
exec "$AOTI_PYTHON" bench/bench.py --bin "$bin" --python "$AOTI_PYTHON" --out "$out" \
  --op-library "$bin/testdata/custom_ops/test_ops_for_python.so" ${BENCH_WORK_DIR:+--work "$BENCH_WORK_DIR"} "$@"
