#!/usr/bin/env bash
# interpreter_vs_eager.sh: the C++ interpreter against Python eager (ep.module()) on the
# fidelity corpus, both measured in one run on this machine; prints a markdown table.
source "$(dirname "${BASH_SOURCE[0]}")/../tools/bazel_env.sh"
cd "$AOTI_ROOT"
bazel_cmd build //bench:interpreter_bench //testdata/corpus //testdata/custom_ops:test_ops_for_python.so >/dev/null
bin="$(bazel info bazel-bin)"
pkgs=()
for p in "$bin"/testdata/corpus/*.pt2; do
  case "$p" in *_aoti.pt2) ;; *) pkgs+=("$p") ;; esac  # the export-only programs
done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$bin/bench/interpreter_bench" "${pkgs[@]}" >"$tmp/cpp.tsv"
"$AOTI_PYTHON" bench/eager_bench.py --load-library "$bin/testdata/custom_ops/test_ops_for_python.so" "${pkgs[@]}" >"$tmp/py.tsv"
echo "| program | interpreter (us/run) | Python eager (us/run) | eager / interpreter |"
echo "| --- | ---: | ---: | ---: |"
join -t $'\t' <(sort "$tmp/cpp.tsv") <(sort "$tmp/py.tsv") |
  awk -F'\t' '{ r = $4 / $2; printf "| %s | %.1f | %.1f | %.2f |\n", $1, $2, $4, r; if (r < min || NR == 1) min = r }
              END { printf "\nslowest ratio (eager / interpreter): %.2f (>= 1 means the interpreter is no slower)\n", min }'
