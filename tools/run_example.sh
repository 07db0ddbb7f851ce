#!/usr/bin/env bash
# run_example.sh: the main job on the bundled example, examples/model_repo (a model
# repository that depends on aoti_harness through local_repository). Sets up on first use.
#   1. `bazel test //...` there: the healthy models (a classifier, an MLP regressor, a
#      conv net, a transformer stack) are AOTI-compiled at build time and pass.
#   2. The failing demo (tagged manual): `bazel test //:failing_demo_test
#      --test_env=DUMP_AOTI_MINIFIER=1`, as the quick start runs it (no cache flags: the
#      compile cache is the default one). It fails, as planted, and the harness reduces
#      it. Shown: the first three lines of its failure, where its repro landed, the first
#      lines of its report, its test.xml properties and Bazel annotation, its report.html
#      opened in headless Chromium, and how to run repro.py and the generated repro_test;
#      then python repro.py is run (it must fail the same way), and the torch-only
#      repro_standalone.py the reduction wrote and proved (summary.json, test.xml) is run
#      alone in an empty directory with only torch importable (it must reproduce), its
#      upstream_issue.md's title naming relu's accuracy drift. Beside it, two tests at a
#      time (--local_test_jobs=2) sharing that cache: regressor_checks_test, two packages
#      by key and four checks in three shards, two of them failing. Each check must run in
#      exactly one shard, each failing one be reduced into its own shard's outputs, and a
#      shard must have run while the demo did.
#   3. examples/ci/collect_failed_artifacts.py, the CI snippets' collector (its unit tests
#      first): it must gather the failed tests' (and shards') test.xml and outputs and
#      nothing of the passing ones; each collected test.xml must be valid JUnit with the
#      repro attached to its failing test case, and the CI snippets must pass their
#      linters (tools/ci_lint.sh); the job summary it writes is shown.
#   4. A second run of the demo is warm by default: the same command again compiles
#      nothing (every compile from the default compile cache the first run filled).
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
  case "$name" in failing_demo_test | regressor_checks_test) continue ;; esac
  verdict="$(grep -E '^\[  (PASSED|FAILED)  \]' "$log" | head -1 || true)"
  echo "  $name: ${verdict:-no result}"
done

echo
echo "== 2. the failing demo and a sharded target, reduced side by side:"
echo "   bazel test //:failing_demo_test //:regressor_checks_test --test_env=DUMP_AOTI_MINIFIER=1 --local_test_jobs=2"
# No cache flags, as the quick start runs it: both tests share the default compile cache
# (and its precompiled headers), two reductions at once, the worst case for a collision.
set +e
bazel_cmd test //:failing_demo_test //:regressor_checks_test --test_env=DUMP_AOTI_MINIFIER=1 \
  --jobs=2 --local_test_jobs=2 --nocache_test_results >"$OUT.demo.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 3 ] || { fail "bazel test exited $rc, expected 3 (tests failed, as planted)"; tail -20 "$OUT.demo.log"; }
rm -rf "$OUT" && mkdir -p "$OUT"
zip="$testlogs/failing_demo_test/test.outputs/outputs.zip"
xml="$testlogs/failing_demo_test/test.xml"
echo "  the failure's first three lines (test.log):"
first_lines="$(grep -A3 -m1 "^AOTI check failed" "$testlogs/failing_demo_test/test.log" || true)"
sed 's/^/  | /' <<<"$first_lines"
sed -n 2p <<<"$first_lines" | grep -q "^  Culprit: found by the reduction" ||
  fail "the failure's second line is not its culprit"
sed -n 3p <<<"$first_lines" | grep -q "^  Open: bazel-testlogs/failing_demo_test/test.outputs/aoti/" ||
  fail "the failure's third line is not where to look"
echo "  and the reduction's, closing the test's log:"
grep -A1 -m1 "AotiModel.CompiledMatchesEager: accuracy, culprit" "$testlogs/failing_demo_test/test.log" | sed 's/^/  | /'
grep -q "AotiModel.CompiledMatchesEager: accuracy, culprit relu (aten.relu.default)" "$testlogs/failing_demo_test/test.log" ||
  fail "the reduction's summary does not name the culprit first"
cache="$(grep -m1 -oE 'reduce: compile cache: [^ ]+' "$testlogs/failing_demo_test/test.log" | sed 's/.*compile cache: //' || true)"
[ -n "$cache" ] || fail "the demo's reduction ran without a compile cache (expected the default one)"
echo "  the default compile cache: ${cache:-none}"
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
  echo "  the demo's repro landed in bazel-testlogs/failing_demo_test/test.outputs/outputs.zip"
  echo "    at ${repro#"$OUT/outputs/"}/ (unzipped here: $repro)"
  echo "  report.md, first lines:"
  head -14 "$repro/report.md" | sed 's/^/  | /'
  echo "  test.xml properties:"
  props="$(grep -oE 'aoti_[a-z_0-9]+(="|" value=")[^"]*"' "$xml" | sed -E 's/(="|" value=")/=/; s/"$//' || true)"
  printf '%s\n' "$props" | sed 's/^/    /'
  for p in aoti_reduced_class aoti_nodes_before aoti_nodes_after aoti_compiles aoti_repro; do
    grep -q "^$p=" <<<"$props" || fail "test.xml lacks the property $p"
  done
  annotations="$testlogs/failing_demo_test/test.outputs_manifest/ANNOTATIONS"
  echo "  the Bazel annotation (test.outputs_manifest/ANNOTATIONS):"
  if [ -f "$annotations" ]; then
    head -3 "$annotations" | sed 's/^/    /'
    for w in "accuracy" "culprit relu" "open: bazel-testlogs/" "reduced from" "compiles"; do
      grep -q "$w" "$annotations" || fail "the annotation does not say '$w'"
    done
  else
    fail "Bazel left no annotation for the demo ($annotations)"
  fi
  echo "  diagnosis.md beside the repro (the triage, with the reducer's culprit):"
  sed -n '3,8p' "$repro/diagnosis.md" | sed 's/^/  | /'
  grep -q "the first divergent node: 'relu'" "$repro/diagnosis.md" ||
    fail "the repro's diagnosis.md does not name the first divergent node"
  echo "  report.html, opened in headless Chromium:"
  bash "$AOTI_ROOT/tools/check_report_html.sh" "$repro/report.html" "$OUT/report_render" "$AOTI_PYTHON" | sed 's/^/    /' ||
    fail "the demo's report.html does not render cleanly"
  echo "  run the repro:"
  echo "    python $repro/repro.py                 # exits 1 while the bug is there"
  echo "    cp -r $repro/{BUILD.bazel,repro_test.cc,repro.pt2,check_options.json} <a package of this repository>/"
  echo "    bazel test //<that package>:repro_test  # fails the same way"
  echo "    open $repro/report.html                # the graphs, the error plot, the steps"
  set +e
  "$AOTI_PYTHON" "$repro/repro.py" >"$OUT/repro_py.log" 2>&1
  py=$?
  set -e
  echo "  python repro.py: exit $py"
  [ "$py" -eq 1 ] || { fail "python repro.py exited $py, expected 1 (fails the same way)"; tail -5 "$OUT/repro_py.log"; }
  # The torch-only repro the reducer wrote and proved, and the issue for PyTorch's tracker.
  echo "  repro_standalone.py and upstream_issue.md (the repro for PyTorch's tracker):"
  for f in repro_standalone.py upstream_issue.md; do
    [ -f "$repro/$f" ] || fail "the demo's repro lacks $f"
  done
  alone_rec="$("$AOTI_PYTHON" -c 'import json,sys; s=json.load(open(sys.argv[1])).get("standalone") or {}; print(s.get("reproduces"), s.get("lines"), s.get("seconds"), "|", s.get("text"))' "$summary")"
  echo "    summary.json's standalone: $alone_rec"
  [[ "$alone_rec" == "True "* ]] || fail "summary.json does not say repro_standalone.py reproduces"
  grep -q '^aoti_standalone_reproduces=true$' <<<"$props" || fail "test.xml's aoti_standalone_reproduces is not true"
  grep -q "^## The torch-only repro" "$repro/report.md" || fail "report.md has no section on repro_standalone.py"
  echo "    upstream_issue.md's title: $(head -1 "$repro/upstream_issue.md")"
  grep -q '^# \[AOTI\] relu: accuracy drift' "$repro/upstream_issue.md" || fail "upstream_issue.md's title does not name relu's accuracy drift"
  # Run here as a maintainer would: the file alone in an empty directory, only torch importable.
  alone_dir="$(mktemp -d "${TMPDIR:-/tmp}/aoti_example_alone.XXXXXX")"
  cp "$repro/repro_standalone.py" "$alone_dir/"
  [ ! -f "$repro/repro_standalone_tensors.pt" ] || cp "$repro/repro_standalone_tensors.pt" "$alone_dir/"
  set +e
  (cd "$alone_dir" && env -u PYTHONPATH TMPDIR="$alone_dir" "$AOTI_PYTHON" repro_standalone.py) >"$OUT/repro_standalone.log" 2>&1
  alone=$?
  set -e
  rm -rf "$alone_dir"
  echo "    python repro_standalone.py, alone: exit $alone ($(wc -l <"$repro/repro_standalone.py") lines; $(grep -m1 'REPRODUCES\|does not reproduce' "$OUT/repro_standalone.log" || true))"
  [ "$alone" -eq 1 ] || { fail "python repro_standalone.py exited $alone alone, expected 1 (reproduces)"; tail -5 "$OUT/repro_standalone.log"; }
fi
# The sharded target: each of its 4 checks ran in exactly one of the 3 shards; each
# failing check was reduced into its own shard's outputs.zip; the healthy ones passed;
# and whether one of its reductions ran while the demo's did is reported.
echo "  regressor_checks_test (packages by key, shard_count = 3):"
for shard in 1 2 3; do
  d="$testlogs/regressor_checks_test/shard_${shard}_of_3"
  [ -f "$d/test.outputs/outputs.zip" ] && unzip -q -o "$d/test.outputs/outputs.zip" -d "$OUT/shard_$shard"
done
"$AOTI_PYTHON" - "$testlogs" "$OUT" <<'PY' || fail "the sharded or parallel run did not hold (above)"
import datetime, glob, json, os, sys
import xml.etree.ElementTree as ET

testlogs, out = sys.argv[1:]
problems, ran, intervals = [], {}, {}

def interval(path, name):
    root = ET.parse(path).getroot()
    start = datetime.datetime.fromisoformat(root.get("timestamp"))
    intervals[name] = (start, start + datetime.timedelta(seconds=float(root.get("time"))))
    return root

interval(os.path.join(testlogs, "failing_demo_test", "test.xml"), "failing_demo_test")
for shard in (1, 2, 3):
    xml = os.path.join(testlogs, "regressor_checks_test", f"shard_{shard}_of_3", "test.xml")
    if not os.path.exists(xml):
        problems.append(f"shard {shard} left no test.xml")
        continue
    root = interval(xml, f"shard {shard}")
    for case in root.iter("testcase"):
        if case.get("status") != "run":
            continue
        name = f"{case.get('classname')}.{case.get('name')}"
        failed = case.find("failure") is not None
        ran.setdefault(name, []).append(shard)
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        if name.startswith("Healthy.") and failed:
            problems.append(f"{name} failed in shard {shard}; the healthy package should pass")
        if name.startswith("Buggy."):
            if not failed:
                problems.append(f"{name} passed in shard {shard}; its package has a planted bug")
            summary = os.path.join(out, f"shard_{shard}", "aoti", name, "repro", "summary.json")
            if not os.path.exists(summary):
                problems.append(f"{name}: no repro at aoti/{name}/repro in shard {shard}'s outputs.zip")
                continue
            s = json.load(open(summary))
            print(f"    {name}: shard {shard}, {s['failure_class']} {s['nodes_before']} -> {s['nodes_after']} nodes, "
                  f"{s['compiles']} compiles ({s['disk_cache_hits']} from the shared cache), "
                  f"aoti_repro={props.get('aoti_repro')}")
            if s["nodes_after"] > 2:
                problems.append(f"{name}: the repro has {s['nodes_after']} nodes, expected at most 2")
            if not props.get("aoti_repro", "").startswith("aoti/"):
                problems.append(f"{name}: test.xml's aoti_repro is {props.get('aoti_repro')!r}")
            alone = s.get("standalone") or {}
            print(f"      repro_standalone.py: {alone.get('text')}")
            if not alone.get("reproduces") or props.get("aoti_standalone_reproduces") != "true":
                problems.append(f"{name}: repro_standalone.py was not proven to reproduce: {alone.get('text')!r}")
expected = ["Buggy.FarOutOfRange", "Buggy.SampleInputs", "Healthy.FarOutOfRange", "Healthy.SampleInputs"]
if sorted(ran) != expected or any(len(v) != 1 for v in ran.values()):
    problems.append(f"checks by shard: {ran}; expected each of {expected} in exactly one shard")
else:
    print("    each of the 4 checks ran in exactly one shard: " +
          ", ".join(f"{k} in {v[0]}" for k, v in sorted(ran.items())))
demo = intervals["failing_demo_test"]
overlap = [n for n, (a, b) in intervals.items() if n != "failing_demo_test" and a < demo[1] and demo[0] < b]
# Whether a shard overlaps the demo is Bazel's scheduling (with every compile a cache hit
# each test takes seconds), so it is reported, not required; the cache's safety under
# concurrent writers is compile_cache_test's TwoProcessesHammeringOneCacheNeverSeeAHalfEntry.
print(f"    ran at the same time as the demo: {', '.join(overlap) or 'none this run (Bazel scheduled them apart)'}")
for p in problems:
    print("    FAIL:", p)
sys.exit(1 if problems else 0)
PY
if [ -n "$cache" ] && [ -d "$cache" ]; then
  leftover="$(find "$cache" -name '*.partial*' -o -name '*.tmp' | head -3)"
  [ -z "$leftover" ] || fail "the shared compile cache holds half-written entries: $leftover"
  echo "  the shared compile cache: $(find "$cache" -name '*.pt2' | wc -l) compiled candidates, no half-written entry"
fi

echo
echo "== 3. examples/ci/collect_failed_artifacts.py (the CI snippets' collector)"
python3 "$AOTI_ROOT/examples/ci/collect_failed_artifacts_test.py" >"$OUT.collector_test.log" 2>&1 ||
  { fail "the collector's unit tests failed"; tail -20 "$OUT.collector_test.log"; }
echo "  its unit tests: $(tail -1 "$OUT.collector_test.log") ($(grep -m1 -oE 'Ran [0-9]+ tests' "$OUT.collector_test.log"))"
rm -rf "$OUT/collected"
(cd "$OUT" && GITHUB_STEP_SUMMARY="$OUT/step_summary.md" python3 "$AOTI_ROOT/examples/ci/collect_failed_artifacts.py" collected "$REPO") | sed 's/^/  /'
collected="$(cd "$OUT/collected" && find . -mindepth 1 -maxdepth 1 -type d | sort | tr '\n' ' ')"
expected=""
for name in failing_demo_test regressor_checks_test/shard_1_of_3 regressor_checks_test/shard_2_of_3 \
            regressor_checks_test/shard_3_of_3; do
  x="$testlogs/$name/test.xml"
  [ -f "$x" ] && grep -qE '<(failure|error)[ >/]' "$x" || continue
  expected+="./${name//\//__} "
  for f in test.xml test.bazel.xml outputs/aoti; do
    [ -e "$OUT/collected/${name//\//__}/$f" ] || fail "collected ${name//\//__} lacks $f"
  done
done
expected="$(tr ' ' '\n' <<<"$expected" | sed '/^$/d' | sort | tr '\n' ' ')"
[ "$collected" = "$expected" ] ||
  fail "collected '$collected', expected exactly the failed tests' directories: '$expected'"
[ -n "$expected" ] || fail "no failed test to collect"
echo "  the demo's collected test.xml, its failing test case as GitLab and Jenkins read it:"
"$AOTI_PYTHON" - "$OUT/collected/failing_demo_test/test.xml" "$OUT" <<'PY' || fail "the demo's collected test.xml does not attach its repro"
import os, sys
import xml.etree.ElementTree as ET
xml, out = sys.argv[1:]
case = next(c for c in ET.parse(xml).getroot().iter("testcase") if c.find("failure") is not None)
failure = case.find("failure")
for line in failure.get("message").splitlines()[:4]:
    print("    | failure: " + line)
attachments = [l[len("[[ATTACHMENT|"):-2] for l in case.find("system-out").text.splitlines() if l.startswith("[[ATTACHMENT|")]
for a in attachments:
    print("    | " + "[[ATTACHMENT|" + a + "]]")
missing = [a for a in attachments if not os.path.exists(os.path.join(out, a))]
ok = (attachments and not missing and any(a.endswith("/repro/report.html") for a in attachments)
      and any(a.endswith("/repro/repro.py") for a in attachments)
      and failure.get("message").startswith("AOTI repro: accuracy, culprit relu (aten.relu.default)"))
if missing:
    print("    attachments that do not resolve in the artifact:", missing)
sys.exit(0 if ok else 1)
PY
bash "$AOTI_ROOT/tools/ci_lint.sh" "$OUT"/collected/*/test.xml 2>"$OUT.ci_lint.log" | sed 's/^/  /' ||
  { fail "the CI snippets or the collected test.xml fail their linters"; tail -5 "$OUT.ci_lint.log"; }
echo "  the job summary (\$GITHUB_STEP_SUMMARY; collected/summary.md for GitLab):"
sed 's/^/  | /' "$OUT/step_summary.md"
grep -q "failing_demo_test \`AotiModel.CompiledMatchesEager\` | accuracy | relu (aten.relu.default)" "$OUT/step_summary.md" ||
  fail "the job summary lacks the demo's row"

echo
echo "== 4. the demo again, as the quick start runs it: warm by default"
first_compiles="$("$AOTI_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["compiles"])' "${summary:-/dev/null}" 2>/dev/null || echo "?")"
first_seconds="$("$AOTI_PYTHON" -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["seconds"]))' "${summary:-/dev/null}" 2>/dev/null || echo "?")"
set +e
start_s=$(date +%s)
# (The first run proved repro_standalone.py; this one writes it without its run alone, an
# AOTI compile outside the compile cache, so that what it shows is the cache.)
bazel_cmd test //:failing_demo_test --test_env=DUMP_AOTI_MINIFIER=1 --test_env=AOTI_REDUCE_STANDALONE_VERIFY=0 \
  --nocache_test_results >"$OUT.demo2.log" 2>&1
rc=$?
wall2=$(( $(date +%s) - start_s ))
set -e
[ "$rc" -eq 3 ] || fail "the second run exited $rc, expected 3 (the test fails, as planted)"
rm -rf "$OUT/outputs2" && unzip -q -o "$zip" -d "$OUT/outputs2"
summary2="$(find "$OUT/outputs2" -name summary.json | head -1)"
"$AOTI_PYTHON" - "${summary2:-/dev/null}" "$first_compiles" "$first_seconds" "$wall2" <<'PY' || fail "the second run was not warm"
import json, sys
path, first_compiles, first_seconds, wall2 = sys.argv[1:]
s = json.load(open(path))
print(f"  | run | compiles | from the disk cache | reduction (s) |")
print(f"  | first (with the sharded test) | {first_compiles} | | {first_seconds} |")
print(f"  | second | {s['compiles']} | {s['disk_cache_hits']} | {round(s['seconds'])} |  (bazel test: {wall2} s)")
alone = s.get("standalone") or {}
print(f"  | repro_standalone.py (written, not run) | {alone.get('text')} |")
sys.exit(0 if s["compiles"] == 0 and s["disk_cache_hits"] > 0 and s["nodes_after"] <= 2 and alone.get("written") else 1)
PY

echo "archives: $(bazel info bazel-bin 2>/dev/null)/*.pt2"
echo "run_example: $([ "$failures" -eq 0 ] && echo ok || echo "$failures failed")"
[ "$failures" -eq 0 ]
