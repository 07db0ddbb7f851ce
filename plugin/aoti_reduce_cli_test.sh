#!/bin/bash
# aoti_reduce's command line keeps its word: the test's --aoti_reduce_* flags mean the
# option of the same name (given with a different value under the command's own name:
# refused), --aoti_reduce_on_failure is refused, and a case directory whose case.json
# names a package, inputs or op library outside it (a path, a symbolic link) is refused
# unless --allow_outside_case_dir; a case inside it runs.
# Usage: aoti_reduce_cli_test.sh AOTI_REDUCE PACKAGE
set -uo pipefail
reduce="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
package="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
work="${TEST_TMPDIR:-$(mktemp -d)}/cli"
rm -rf "$work" && mkdir -p "$work"
failed=0
expect() {  # expect STATUS TEXT WHAT ARGS...: the exit status, and TEXT in the output
  local want="$1" text="$2" what="$3"
  shift 3
  "$reduce" "$@" >"$work/out" 2>&1
  local got=$?
  if [[ $got != "$want" ]] || ! grep -qF -- "$text" "$work/out"; then
    echo "FAIL: $what: exit $got (expected $want), output without '$text':" >&2
    tail -5 "$work/out" >&2
    failed=1
  else
    echo "ok: $what: $(grep -F -- "$text" "$work/out" | head -1 | cut -c1-160)"
  fi
}
expect 2 "name the same option with different values" "a test flag and the command's own, differing" \
  minify --package="$package" --aoti_reduce_jobs=2 --jobs=3
expect 2 "--aoti_reduce_on_failure is the test's switch" "the test's reduce switch" \
  minify --package="$package" --aoti_reduce_on_failure
expect 2 "--jobs=-1: expected 0" "a test flag is honoured (its bad value is the option's)" \
  minify --package="$package" --aoti_reduce_jobs=-1
expect 2 "--max_granularity" "the command's own flags still checked" \
  minify --package="$package" --max_granularity=3

# Case directories.
case_json() {  # case_json DIR PACKAGE [OP_LIBRARY]
  local lib=""
  [[ -n "${3:-}" ]] && lib="\"$3\""
  cat >"$1/case.json" <<JSON
{"format": "aoti_harness.case/2", "package": "$2", "failure_class": "accuracy",
 "check_options": {"model": "model", "runner": {"op_libraries": [$lib]}}}
JSON
}
mkdir -p "$work/outside" "$work/symlink" "$work/library" "$work/inside"
case_json "$work/outside" "$package"
expect 2 "names paths outside the case directory" "a package outside" run --case_dir="$work/outside"
ln -s "$package" "$work/symlink/original.pt2"
case_json "$work/symlink" original.pt2
expect 2 "package: $work/symlink/original.pt2" "a symbolic link leading out" run --case_dir="$work/symlink"
cp "$package" "$work/library/original.pt2"
case_json "$work/library" original.pt2 /usr/lib/x86_64-linux-gnu/libm.so.6
expect 2 "op library: /usr/lib/x86_64-linux-gnu/libm.so.6" "an op library outside" run --case_dir="$work/library"
cp "$package" "$work/inside/original.pt2"
case_json "$work/inside" original.pt2
expect 0 "passes" "a case inside its directory runs" run --case_dir="$work/inside"
expect 0 "passes" "--allow_outside_case_dir lets a case made by hand run" \
  run --case_dir="$work/outside" --allow_outside_case_dir

# bisect-torch: wrong input is named, never a crash.
expect 2 "bisect-torch needs --case_dir" "bisect-torch without a case" bisect-torch
expect 2 "has no repro.py" "bisect-torch on a case with no repro" bisect-torch --case_dir="$work/inside" \
  --torch_pythons=/bin/true
expect 2 "no such directory" "bisect-torch on a directory that is not there" bisect-torch --case_dir="$work/nowhere"
mkdir -p "$work/repro" && echo "# stand-in" >"$work/repro/repro.py"
expect 0 "No torch of the 1 torch could judge" "bisect-torch with a Python that has no torch: said, not a crash" \
  bisect-torch --case_dir="$work/repro" --torch_pythons=/bin/false
exit $failed
