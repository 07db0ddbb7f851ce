#!/usr/bin/env bash
# interpreter_fuzz_test: generate random programs, then check the interpreter against
# Python on each, bit for bit.
# Usage: interpreter_fuzz_test.sh PYTHON GEN_PROGRAMS CHECK PACKAGE_MODEL [--count=N] [--seed=S]
#        [--include=MODEL.py ...]
# (a later --count or --seed wins, so --test_arg overrides the BUILD file's defaults;
# --include adds a model file, such as a regression, to every run).
# Mismatching model files are kept in $TEST_UNDECLARED_OUTPUTS_DIR/fuzz_failures.
set -euo pipefail
python="$1" gen="$2" check="$3" package_model="$4"
shift 4
count=300 seed=0 include=()
for arg in "$@"; do
  case "$arg" in
    --count=*) count="${arg#--count=}" ;;
    --seed=*) seed="${arg#--seed=}" ;;
    --include=*) include+=("${arg#--include=}") ;;
    *) echo "interpreter_fuzz_test: unknown argument '$arg'; expected --count=N, --seed=S or --include=FILE" >&2; exit 2 ;;
  esac
done
work="${TEST_TMPDIR:-$(mktemp -d)}/fuzz"
keep="${TEST_UNDECLARED_OUTPUTS_DIR:-$work}/fuzz_failures"
"$python" "$gen" --out "$work" --count "$count" --seed "$seed" --package-model "$package_model" \
  --include "${include[@]}"
cat "$work/summary.json"
echo
"$check" --dir "$work" --keep_failures "$keep"
