#!/usr/bin/env bash
# run_example.sh: the main job on the bundled example, examples/model_repo (a model
# repository that depends on aoti_harness through local_repository). Sets up on first use.
#   1. `bazel test //...` there: the healthy models (a classifier, an MLP regressor, a
#      conv net, a transformer stack) are AOTI-compiled at build time and pass.
#   2. The failing demo (tagged manual): `bazel test //:failing_demo_test
#      --test_env=DUMP_AOTI_MINIFIER=1`. It fails, as planted, and the harness reduces it.
#      Shown: where its repro landed (outputs.zip), the first lines of its report, its
#      test.xml properties, and how to run repro.py and the generated repro_test; then
#      python repro.py is run (it must fail the same way).
#   3. examples/ci/collect_failed_artifacts.sh, the CI snippet's collector, must gather
#      the demo's test.xml and outputs.zip, and nothing of the passing tests.
# Exits non-zero when any of that does not hold. The demo's unzipped outputs go to
# $AOTI_EXAMPLE_OUT (default $TMPDIR/aoti_example), outside the repository.
source "$(dirname "${BASH_SOURCE[0]}")/bazel_env.sh"
REPO="$AOTI_ROOT/examples/model_repo"
OUT="${AOTI_EXAMPLE_OUT:-${TMPDIR:-/tmp}/aoti_example}"
cd "$REPO"
failures=0
fail() { echo "run_example: FAIL: $*"; failures=$((failures + 1)); }

echo "== 1. bazel test //... in $REPO (the healthy models)"
bazel_cmd test //... || fail "the healthy models did not pass"
testlogs="$(bazel info bazel-testlogs 2>/dev/null)"
for log in "$testlogs"/*/test.log; do
  [ -f "$log" ] || continue
  name="$(basename "$(dirname "$log")")"
  [ "$name" = failing_demo_test ] && continue
  verdict="$(grep -E '^\[  (PASSED|FAILED)  \]' "$log" | head -1 || true)"
  echo "  $name: ${verdict:-no result}"
done

echo
echo "== 2. the failing demo: bazel test //:failing_demo_test --test_env=DUMP_AOTI_MINIFIER=1"
set +e
bazel_cmd test //:failing_demo_test --test_env=DUMP_AOTI_MINIFIER=1 --nocache_test_results >"$OUT.demo.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 3 ] || { fail "the demo's bazel test exited $rc, expected 3 (a test failed, as planted)"; tail -20 "$OUT.demo.log"; }
zip="$testlogs/failing_demo_test/test.outputs/outputs.zip"
xml="$testlogs/failing_demo_test/test.xml"
rm -rf "$OUT" && mkdir -p "$OUT"
if [ -f "$zip" ]; then
  unzip -q -o "$zip" -d "$OUT/outputs"
  summary="$(find "$OUT/outputs" -name summary.json | head -1)"
fi
if [ -z "${summary:-}" ]; then
  fail "the demo left no repro in $zip"
else
  repro="$(dirname "$summary")"
  after="$("$AOTI_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["nodes_after"])' "$summary")"
  [ "$after" -le 2 ] || fail "the demo's repro has $after nodes, expected at most 2"
  echo "  the repro landed in bazel-testlogs/failing_demo_test/test.outputs/outputs.zip"
  echo "    at ${repro#"$OUT/outputs/"}/ (unzipped here: $repro)"
  echo "  report.md, first lines:"
  head -14 "$repro/report.md" | sed 's/^/  | /'
  echo "  test.xml properties:"
  props="$(grep -oE 'aoti_[a-z_0-9]+(="|" value=")[^"]*"' "$xml" | sed -E 's/(="|" value=")/=/; s/"$//' || true)"
  printf '%s\n' "$props" | sed 's/^/    /'
  for p in aoti_reduced_class aoti_nodes_before aoti_nodes_after aoti_compiles aoti_repro; do
    grep -q "^$p=" <<<"$props" || fail "test.xml lacks the property $p"
  done
  echo "  run the repro:"
  echo "    python $repro/repro.py                 # exits 1 while the bug is there"
  echo "    cp $repro/{BUILD.bazel,repro_test.cc,repro.pt2} <a package of this repository>/"
  echo "    bazel test //<that package>:repro_test  # fails the same way"
  set +e
  "$AOTI_PYTHON" "$repro/repro.py" >"$OUT/repro_py.log" 2>&1
  py=$?
  set -e
  echo "  python repro.py: exit $py"
  [ "$py" -eq 1 ] || { fail "python repro.py exited $py, expected 1 (fails the same way)"; tail -5 "$OUT/repro_py.log"; }
fi

echo
echo "== 3. examples/ci/collect_failed_artifacts.sh (the CI snippets' collector)"
bash "$AOTI_ROOT/examples/ci/collect_failed_artifacts.sh" "$OUT/collected" "$REPO" | sed 's/^/  /'
collected="$(cd "$OUT/collected" && find . -type f | sort | tr '\n' ' ')"
[ "$collected" = "./failing_demo_test/outputs.zip ./failing_demo_test/test.xml " ] ||
  fail "collected '$collected', expected exactly the demo's outputs.zip and test.xml"

echo
echo "archives: $(bazel info bazel-bin 2>/dev/null)/*.pt2"
echo "run_example: $([ "$failures" -eq 0 ] && echo ok || echo "$failures failed")"
[ "$failures" -eq 0 ]
