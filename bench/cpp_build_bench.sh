#!/usr/bin/env bash
# cpp_build_bench.sh: the harness's C++ built from nothing, with the precompiled header
# (harness/pch) and without it (--define=aoti_pch=off), one after the other on this machine.
# Each build has an output base of its own, new, and no disk cache: every C++ compile of
# the main workspace's cc_library, cc_test and cc_binary targets runs, and nothing else (the
# compilation_outputs output group: no link, no AOTI package a test reads). Prints a table:
# wall time, the compiles' summed time (Bazel's profile), and the precompiled header's own
# action.
#
# Modes: off (--define=aoti_pch=off: no precompiled header), libraries (the prelude for
# every target, the tests' own off: --define=aoti_test_pch=off), on (the prelude for
# libraries and binaries, the test prelude for tests).
#
# Usage: bash bench/cpp_build_bench.sh [--jobs N] [--modes "off libraries on"]
#        (default modes "off on": about 25 min on 2 cores; each mode about 10)
source "$(dirname "${BASH_SOURCE[0]}")/../tools/bazel_env.sh"
cd "$AOTI_ROOT"
jobs=()
modes=(off on)
while (($#)); do
  case "$1" in
    --jobs)
      [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "cpp_build_bench: --jobs needs a number, got '${2:-}'" >&2; exit 2; }
      jobs=(--jobs="$2"); shift 2 ;;
    --modes)
      read -r -a modes <<<"${2:-}"
      for m in "${modes[@]}"; do
        [[ "$m" =~ ^(off|libraries|on)$ ]] || { echo "cpp_build_bench: --modes: '$m' is not off, libraries or on" >&2; exit 2; }
      done
      ((${#modes[@]})) || { echo "cpp_build_bench: --modes needs at least one of off, libraries, on" >&2; exit 2; }
      shift 2 ;;
    *) echo "cpp_build_bench: unknown argument '$1' (expected --jobs N, --modes \"off libraries on\")" >&2; exit 2 ;;
  esac
done
work="${TMPDIR:-/tmp}/aoti_cpp_build_bench"
rm -rf "$work" && mkdir -p "$work"
# Every C++ target of the workspace but the fuzzers (clang, --config=fuzz) and the GPU ones.
mapfile -t targets < <(bazel query 'kind("cc_(library|test|binary) rule", //...) except attr(tags, "manual|requires-gpu", //...) except //fuzz/...' 2>/dev/null)
echo "cpp_build_bench: ${#targets[@]} targets, each build from nothing"
rows=()
for mode in "${modes[@]}"; do
  base="$work/output_base_$mode"
  defines=(--define=aoti_pch=on)
  case "$mode" in
    off) defines=(--define=aoti_pch=off) ;;
    libraries) defines=(--define=aoti_test_pch=off) ;;
  esac
  start=$(date +%s)
  bazel --output_base="$base" build --output_groups=compilation_outputs "${defines[@]}" --repo_env=AOTI_PYTHON="$AOTI_PYTHON" \
    "${jobs[@]}" --profile="$work/profile_$mode.json.gz" "${targets[@]}" >"$work/build_$mode.log" 2>&1 ||
    { tail -30 "$work/build_$mode.log"; echo "cpp_build_bench: the build with the precompiled header $mode failed" >&2; exit 1; }
  seconds=$(( $(date +%s) - start ))
  bazel --output_base="$base" shutdown >/dev/null 2>&1 || true
  rows+=("$("$AOTI_PYTHON" - "$work/profile_$mode.json.gz" "$mode" "$seconds" <<'PY'
import gzip, json, sys
path, mode, seconds = sys.argv[1:]
events = json.load(gzip.open(path))["traceEvents"]
compiles = [e for e in events if e.get("ph") == "X" and e.get("cat") == "action processing"
            and e.get("name", "").startswith("Compiling ")]
pch = [e for e in events if e.get("ph") == "X" and e.get("cat") == "action processing"
       and e.get("name", "").startswith("Precompiling ")]
total = sum(e["dur"] for e in compiles) / 1e6
print(f"| {mode} | {seconds} s | {len(compiles)} | {total:.0f} s | {total / max(len(compiles), 1):.1f} s | "
      f"{(sum(e['dur'] for e in pch) / 1e6):.0f} s |")
PY
)")
  rm -rf "$base"
done
echo "| precompiled header | wall | C++ compiles | their summed time | per compile | precompiling |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
printf '%s\n' "${rows[@]}"
