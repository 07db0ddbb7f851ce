#!/usr/bin/env bash
# generated_corpus.sh: the reducer on generated programs with a bug planted in any op
# (bench/generated_corpus.py), through the user's path: a model repository that reads the
# harness through local_repository, `bazel test` for each healthy program (a failure is a
# false alarm), then `DUMP_AOTI_MINIFIER=1 bazel test` for each planted one (the reduction's
# summary.json: failure class, culprit, compiles, wall).
#
# Usage: bench/generated_corpus.sh [A:B]   the seeds A to B-1 (default 0:20)
# The summary goes to bench/results/generated_corpus.json, merged with the seeds already
# there (a long run split by seed ranges across sessions), and its tables to
# bench/results/generated_corpus.md. The generated repository and the logs go to
# $AOTI_GENERATED_OUT (default $TMPDIR/aoti_generated_corpus). Long: about 40 s per program
# on 2 cores (two packages, the check of each, and the reduction); not part of CI.
source "$(dirname "${BASH_SOURCE[0]}")/../tools/bazel_env.sh"
seeds="${1:-0:20}"
[[ "$seeds" =~ ^[0-9]+:[0-9]+$ ]] || { echo "generated_corpus: expected seeds A:B (e.g. 0:20), got '$seeds'" >&2; exit 2; }
OUT="${AOTI_GENERATED_OUT:-${TMPDIR:-/tmp}/aoti_generated_corpus}"
REPO="$OUT/repo_${seeds/:/_}"
rm -rf "$REPO" && mkdir -p "$REPO"
"$AOTI_PYTHON" "$AOTI_ROOT/bench/generated_corpus.py" generate --out "$REPO" --harness "$AOTI_ROOT" --seeds "$seeds"
cd "$REPO"
start=$(date +%s)
echo "== the healthy programs: bazel test //... (each failure is a false alarm)"
set +e
bazel_cmd test //... --keep_going --local_test_jobs=2 >"$OUT/healthy_${seeds/:/_}.log" 2>&1
echo "  bazel exit $? ($(($(date +%s) - start)) s)"
planted=$(bazel_cmd query 'attr(tags, manual, tests(//...))' 2>/dev/null | tr '\n' ' ')
# A fresh compile cache: each reduction's compiles are its own, none taken from an earlier run.
CACHE="$OUT/compile_cache"
rm -rf "$CACHE" && mkdir -p "$CACHE"
echo "== the planted programs: DUMP_AOTI_MINIFIER=1 bazel test (each must fail and be reduced)"
pstart=$(date +%s)
# shellcheck disable=SC2086  # the targets, one word each
DUMP_AOTI_MINIFIER=1 bazel_cmd test $planted --keep_going --nocache_test_results --local_test_jobs=2 \
  --test_env=DUMP_AOTI_MINIFIER=1 --test_env=AOTI_REDUCE_JOBS=1 --test_env=AOTI_REDUCE_STANDALONE_VERIFY=0 \
  --test_env=AOTI_COMPILE_CACHE_DIR="$CACHE" --sandbox_writable_path="$CACHE" >"$OUT/planted_${seeds/:/_}.log" 2>&1
echo "  bazel exit $? (3: tests failed, as planted; $(($(date +%s) - pstart)) s)"
set -e
mkdir -p "$AOTI_ROOT/bench/results"
"$AOTI_PYTHON" "$AOTI_ROOT/bench/generated_corpus.py" summarize --repo "$REPO" --testlogs "$(bazel info bazel-testlogs 2>/dev/null)" \
  --results "$AOTI_ROOT/bench/results/generated_corpus.json" --merge --table "$AOTI_ROOT/bench/results/generated_corpus.md"
echo "generated_corpus: seeds $seeds in $(($(date +%s) - start)) s"
