#!/usr/bin/env bash
# localize_first's float64 references, promoting the weights per node against once: the
# bench's 277-node deep_stack program and a GPT-2 with weights of a real model's size
# (bench/programs/gpt2_wide.py, 220 MB), each exported (no AOTI compile) and measured by
# //bench:localize_first_bench, both ways in one run. Writes bench/LOCALIZE_FIRST.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source tools/bazel_env.sh
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for m in deep_stack gpt2_wide; do
  "$AOTI_PYTHON" tools/package_model.py --model "bench/programs/$m.py" --export-only --out "$work/$m.pt2" >/dev/null
done
bazel_cmd build //bench:localize_first_bench >/dev/null 2>&1
{
  echo "# localize_first: the float64 references with the weights promoted once"
  echo
  echo "Written by \`bash bench/localize_first_bench.sh\` on $(date +%F) ($(nproc) cores, torch $("$AOTI_PYTHON" -c 'import torch; print(torch.__version__)'))."
  echo "Each node of the program alone, run by the interpreter in float64 on eager's values for its inputs,"
  echo "as localize_first judges every node; both ways one after the other in one process."
  echo
  "$(bazel info bazel-bin 2>/dev/null)/bench/localize_first_bench" "$work/deep_stack.pt2" "$work/gpt2_wide.pt2"
} >bench/LOCALIZE_FIRST.md
cat bench/LOCALIZE_FIRST.md
