#!/usr/bin/env bash
# The listener end to end: a failing model test run with DUMP_AOTI_MINIFIER=1 reduces its
# failure and leaves the repro in its undeclared outputs, with an annotation.
# The torch-only repro is written after it (not run alone here: that is one AOTI compile,
# which tools/run_example.sh makes), and said in summary.json, report.md and test.xml.
# Usage: reduce_on_failure_test.sh TEST_BINARY PACKAGE RUNNER PYTHON COMPILE_SERVER STANDALONE_PY
set -uo pipefail
binary="$1" package="$2" runner="$3" python="$4" server="$5" standalone="$6"
xml="$(mktemp "${TEST_TMPDIR:-/tmp}/test.XXXXXX.xml")"
out="$(mktemp -d "${TEST_TMPDIR:-/tmp}/outputs.XXXXXX")"
notes="$(mktemp -d "${TEST_TMPDIR:-/tmp}/annotations.XXXXXX")"
TEST_UNDECLARED_OUTPUTS_DIR="$out" TEST_UNDECLARED_OUTPUTS_ANNOTATIONS_DIR="$notes" DUMP_AOTI_MINIFIER=1 \
  XML_OUTPUT_FILE="" "$binary" --aoti_package="$package" --aoti_runner="$runner" --aoti_python="$python" \
  --aoti_compile_server="$server" --aoti_standalone_script="$standalone" --noaoti_reduce_standalone_verify \
  --gtest_output="xml:$xml" >"$out/log.txt" 2>&1
rc=$?
fail() { echo "FAIL: $*"; tail -40 "$out/log.txt"; exit 1; }
[ "$rc" -ne 0 ] || fail "the model test passed; expected the planted accuracy bug to fail it"
case_dir="$out/aoti/AotiModel.CompiledMatchesEager"
[ -f "$case_dir/case.json" ] || fail "no case.json in $case_dir"
for f in repro.py repro.pt2 report.md BUILD.bazel repro_test.cc graph.dot; do
  [ -f "$case_dir/repro/$f" ] || fail "no $f in $case_dir/repro"
done
# One copy of the model: the repro's case.json points at the case's own original.pt2.
[ -f "$case_dir/original.pt2" ] || fail "no original.pt2 in the case"
[ ! -e "$case_dir/repro/original.pt2" ] || fail "the repro holds a second copy of the original"
grep -q '"package": "../original.pt2"' "$case_dir/repro/case.json" || fail "the repro's case.json does not point at ../original.pt2"
grep -q "aten.relu.default" "$case_dir/repro/report.md" || fail "the repro does not contain relu"
grep -q "reduced from" "$out/log.txt" || fail "no pointer to the repro on stderr"
ls "$notes"/aoti_*.part >/dev/null 2>&1 || fail "no annotation"
for f in repro_standalone.py upstream_issue.md; do
  [ -f "$case_dir/repro/$f" ] || fail "no $f in $case_dir/repro"
done
grep -q '"written": true' "$case_dir/repro/summary.json" || fail "summary.json does not record repro_standalone.py as written"
grep -q "^## The torch-only repro" "$case_dir/repro/report.md" || fail "report.md has no section on repro_standalone.py"
grep -q "repro_standalone.py: written (" "$out/log.txt" || fail "the log's summary does not say repro_standalone.py was written"
# gtest writes a property as an attribute (older) or as <property name= value=> (newer).
grep -qE 'aoti_standalone_reproduces(="|" value=")false"' "$xml" || fail "test.xml lacks aoti_standalone_reproduces"
grep -q "class Repro(torch.nn.Module)" "$case_dir/repro/repro_standalone.py" || fail "repro_standalone.py holds no program"
echo "reduce_on_failure: 1 passed, 0 failed"
