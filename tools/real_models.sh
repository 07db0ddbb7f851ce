#!/usr/bin/env bash
# real_models.sh: the real-model corpus (testdata/real, transformers models with small
# random configurations) through the user's path: a model repository that uses the harness
# through local_repository, under `bazel test`.
#
#   1. `bazel test //...` there: each healthy model's AOTI check passes (no false alarm),
#      and the interpreter matches Python eager in float32 and bfloat16 (bit for bit here;
#      within assert_close's default tolerance wherever a CPU kernel rounds differently).
#   2. Each planted case: `DUMP_AOTI_MINIFIER=1 bazel test //:<case>_test`, with every
#      PyTorch debug and repro variable also set in the test's environment. The test must
#      fail; from its outputs.zip the repro must have at most 2 nodes, one of them the
#      planted op; `python repro.py` must reproduce (exit 1); the torch-only
#      repro_standalone.py the reduction wrote must have reproduced run alone (summary.json's
#      record), with upstream_issue.md beside it; and the generated
#      BUILD.bazel + repro_test.cc, dropped into the repository, must fail under
#      `bazel test` with the same failure class.
#
# Usage: real_models.sh           the healthy corpus + one planted case per class (CI)
#        real_models.sh --all     the healthy corpus + every planted case
#        real_models.sh CASE...   only these planted cases (e.g. gpt2_runtime_error)
# Prints one row per planted case (class, nodes, ops, compiles, seconds, repro checks).
# Logs and each case's unzipped outputs.zip go to $AOTI_REAL_MODELS_OUT (default
# $TMPDIR/aoti_real_models).
source "$(dirname "${BASH_SOURCE[0]}")/bazel_env.sh"
REPO="$AOTI_ROOT/testdata/real"
# Logs and the unzipped outputs.zip files live outside the model repository: a repro's
# BUILD.bazel inside it would become a package of the next `bazel test //...`.
OUT="${AOTI_REAL_MODELS_OUT:-${TMPDIR:-/tmp}/aoti_real_models}"
mkdir -p "$OUT"
cd "$REPO"
# The repro packages (repros/<case>_repro) fail on purpose: none may be left over from an
# interrupted run for `bazel test //...` to find, and they are removed on exit.
rm -rf "$REPO/repros"
trap 'rm -rf "$REPO/repros"' EXIT

# One planted case per class on the smallest graphs (CI), and every case (--all); then what a
# model team brings: a package its pipeline shipped (reduced when told the pipeline's configs,
# "not reduced" when a fresh compile does not fail), a test's own assert_close options, a bug
# seen only in an int64 output, a custom operator given only as a shared library.
TEAM_CASES=(resnet_shipped_relu_accuracy resnet_shipped_other_configs ast_calibrated_log1p_accuracy opt_relu_accuracy
            distilbert_relu_accuracy distilbert_hang)
# Verdicts that no rule can judge, each failing with its own class and diagnosis, never
# reduced: a random model, a package whose recorded Python eager output was altered, and
# Mixtral at transformers' default experts implementation (an operator written only in Python).
VERDICT_CASES=(bert_noise bert_altered_recording mixtral_default_experts)
# Team cases whose tests turn the stage ladder off (--aoti_reduce_stage_ladder=false in
# BUILD.bazel's NO_LADDER): the report must say it was turned off, and no ladder compile is made.
LADDER_OFF_CASES=(resnet_shipped_relu_accuracy ast_calibrated_log1p_accuracy opt_relu_accuracy distilbert_relu_accuracy)
# The crashes and the compile error where the kernels' names say nothing
# (cpp.descriptive_names off); in ResNet the relu is fused with its batch norm. CI runs
# these in place of the named ones (--all has both; //reducer:reducer_test pins the named
# block's).
UNNAMED_CASES=(bert_compile_error_unnamed bert_runtime_error_unnamed resnet_signal_unnamed)
# Programs that are not one straight line: the bug inside a cond's branch, a while_loop's
# body, a scan's cell, an autocast region, after data-dependent routing, after a KV cache write.
CONTROL_FLOW_CASES=(mixtral_routed_compile_error mixtral_routed_relu_accuracy early_exit_relu_accuracy
                    early_exit_compile_error_unnamed looped_decoder_signal recurrent_scan_compile_error
                    bert_autocast_relu_accuracy cached_decoder_relu_accuracy)
# CI: one planted case per class, each path once: the unnamed compile error in the early exit
# (torch.cond around GPT-2) rather than in BERT, the relu accuracy bug under autocast rather
# than in ViT (--all runs both).
# What serving teams ship: an int8 model from the PT2E flow, its float head's relu planted.
SERVING_CASES=(int8_cnn_relu_accuracy)
CI_CASES=(bert_runtime_error_unnamed resnet_signal_unnamed bert_log1p_accuracy "${TEAM_CASES[@]}" "${VERDICT_CASES[@]}"
          mixtral_routed_compile_error early_exit_compile_error_unnamed bert_autocast_relu_accuracy)
ALL_CASES=(bert_compile_error llama_compile_error bert_runtime_error gpt2_runtime_error vit_signal gpt2_signal
           gpt2_relu_accuracy vit_relu_accuracy t5_log1p_accuracy bert_log1p_accuracy "${UNNAMED_CASES[@]}"
           "${TEAM_CASES[@]}" "${VERDICT_CASES[@]}" "${CONTROL_FLOW_CASES[@]}" "${SERVING_CASES[@]}")
healthy=1
cases=("${CI_CASES[@]}")
if [ "${1:-}" = "--all" ]; then
  cases=("${ALL_CASES[@]}")
elif [ $# -gt 0 ]; then
  cases=("$@")
  healthy=0
fi

# Every variable the harness strips from its children, set in the test's environment.
DEBUG_ENV=(DUMP_AOTI_MINIFIER=1 AOTINDUCTOR_REPRO_LEVEL=3 TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=4
           TORCHDYNAMO_REPRO_FORWARD_ONLY=1 TORCHDYNAMO_REPRO_IGNORE_NON_FP=1 TORCH_COMPILE_DEBUG=1
           TORCH_COMPILE_DEBUG_DIR=/tmp/aoti_real_models_debug TORCH_COMPILE_DEBUG_SAVE_REAL=1 TORCH_COMPILE_CPROFILE=1
           TORCH_LOGS=+inductor TORCH_TRACE=/tmp/aoti_real_models_trace TORCHINDUCTOR_NAN_ASSERTS=1
           TORCHINDUCTOR_RUNTIME_TRITON_NAN_ASSERTS=1 TORCHINDUCTOR_SAVE_ARGS=1 TORCHINDUCTOR_PROFILE=1
           TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE=1 AOT_INDUCTOR_DEBUG_COMPILE=1 AOT_INDUCTOR_DEBUG_SYMBOLS=1
           AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER=2 AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT=all
           AOTI_RUNTIME_CHECK_INPUTS=1 CUDA_LAUNCH_BLOCKING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1)
test_env=()
for kv in "${DEBUG_ENV[@]}"; do test_env+=("--test_env=$kv"); done

failures=0
fail() { echo "real_models: FAIL: $*"; failures=$((failures + 1)); }

if ((healthy)); then
  echo "== bazel test //... in testdata/real (healthy models, interpreter identity)"
  start=$(date +%s)
  bazel_cmd test //... || fail "the healthy real-model corpus did not pass"
  testlogs="$(bazel info bazel-testlogs 2>/dev/null)"
  # One row per model: op nodes (from the archive's program), the verdict, the interpreter's
  # bit-identity in float32 and bfloat16, and the seconds the check took (test.xml).
  "$AOTI_PYTHON" - "$(bazel info bazel-bin 2>/dev/null)" "$testlogs" <<'PY'
import glob, json, re, sys, zipfile
bin_dir, logs = sys.argv[1], sys.argv[2]
identity = open(f"{logs}/interpreter_identity_test/test.log").read()
# (test, package, what it shows); the six with a bfloat16 twin are in the identity test.
rows = [(m + "_test", m, "") for m in ["bert", "gpt2", "llama", "t5", "vit", "mixtral"]] + [
    ("ast_test", "ast", "keyword input, dict output"),
    ("ast_assert_close_test", "ast", "the team's own test: assert_close at 1e-5"),
    ("wav2vec2_test", "wav2vec2", "dict output holding a tuple"),
    ("opt_test", "opt", "int64 output only"),
    ("distilbert_test", "distilbert", "model 'encoder', custom op from op_libraries only"),
    ("resnet_shipped_test", "resnet_shipped", "the team's shipped .pt2 (model 'classifier'), not recompiled"),
    ("ast_calibrated_default_rule_test", "ast_calibrated_log1p_accuracy", "planted 1e-4 error: the fp64 rule lets it through"),
    ("bert_bf16_compiled_test", "bert_bf16_compiled", "bfloat16, compiled"),
    ("vit_fp16_test", "vit_fp16", "float16, compiled"),
    ("bert_noise_seeded_test", "bert_noise_fallback_random", "random (randn_like), fallback_random, seeded"),
    ("mixtral_routed_test", "mixtral_routed", "data-dependent routing: 8 unbacked sizes"),
    ("early_exit_test", "early_exit", "torch.cond around GPT-2 blocks"),
    ("looped_decoder_test", "looped_decoder", "while_loop around Llama's MLP"),
    ("recurrent_scan_test", "recurrent_scan", "scan over a recurrent cell"),
    ("bert_autocast_test", "bert_autocast", "BERT under torch.autocast (bfloat16)"),
    ("cached_decoder_test", "cached_decoder", "a KV cache and a step counter written in forward"),
    ("recommender_test", "recommender", "embedding bags: ids and offsets, dynamic, every shape point"),
    ("int8_cnn_test", "int8_cnn", "int8 from the PT2E flow, freezing: judged by SQNR"),
    ("mixtral_default_experts_python_test", "mixtral_default_experts",
     "transformers' default experts (a custom op written only in Python): run in a Python child, judged by Python's recording"),
]
print("| test | op nodes | outputs | verdict | interpreter fp32 | interpreter bf16 | check (s) | what it shows |")
print("| --- | ---: | ---: | --- | --- | --- | ---: | --- |")
for test, m, what in rows:
    z = zipfile.ZipFile(f"{bin_dir}/{m}.pt2")
    prog = json.loads(z.read(next(n for n in z.namelist() if re.search(r"/models/[^/]+\.json$", n))))
    def count(nodes):  # the nodes inside subgraphs too
        return sum(1 + sum(count(i["arg"]["as_graph"]["graph"]["nodes"]) for i in n["inputs"] if "as_graph" in i["arg"])
                   for n in nodes)
    ops = count(prog["graph_module"]["graph"]["nodes"])
    outs = sum(1 for o in prog["graph_module"]["signature"]["output_specs"] if "user_output" in o)
    log = open(f"{logs}/{test}/test.log").read()
    verdict = "pass" if re.search(r"\[  PASSED  \] \d+ tests?", log) and "FAILED" not in log else "FALSE ALARM"
    xml = open(f"{logs}/{test}/test.xml").read()
    secs = re.search(r'<testcase[^>]*time="([0-9.]+)"', xml)
    points = re.findall(r'<testcase name="[^"]*"[^>]*result="(\w+)"[^>]*classname="AotiModelShapes"', xml)
    if points:  # a dynamic package: its shape points, run and skipped
        what += f"; shape points: {points.count('completed')} run, {points.count('skipped')} skipped"
    def ident(p):
        found = re.search(rf"/{p}\.pt2 \([A-Za-z0-9]+\): (bit-identical|max \|diff\| \S+)", identity)
        return found.group(1).replace("|", "\\|") if found else "-"  # "-": not in the identity test
    print(f"| {test} | {ops} | {outs} | {verdict} | {ident(m)} | {ident(m + '_bf16')} | {secs.group(1) if secs else '?'} | {what} |")
PY
  echo "  healthy corpus: $(( $(date +%s) - start )) s"
  # One healthy check again with every debug variable set: still a pass.
  bazel_cmd test //:bert_test --nocache_test_results "${test_env[@]}" >/dev/null 2>&1 ||
    fail "bert_test fails once the PyTorch debug variables are set in the test environment"
fi

expected_op() {
  case "$1" in
    *log1p_accuracy) echo aten.log1p ;;
    *_hang) echo corpus_ops.rms_scale ;;  # the team's operator that never returns
    *) echo aten.relu ;;
  esac
}

# The verdict cases: the class and the diagnosis each must end in, and a word its message must hold.
verdict_of() {
  case "$1" in
    bert_noise) echo "nondeterministic nondeterministic randn_like" ;;
    bert_altered_recording) echo "harness_disagreement harness_disagreement recorded" ;;
    mixtral_default_experts) echo "not_supported python_only_op transformers::grouped_mm_fallback" ;;
    *) echo "" ;;
  esac
}

# The planted cases whose failure a fresh compile must not reproduce: the shipped package
# was built with configs the harness was not told (its report says so; nothing is reduced).
not_reproduced() { [[ "$1" == *_other_configs ]]; }

# Compiles are shared through one compile cache, cleared for each run: the planted tests
# write it, and aoti_reduce --case_dir on a case from outputs.zip reads it back.
CACHE="$OUT/compile_cache"
rm -rf "$CACHE" && mkdir -p "$CACHE"

rows=()
mkdir -p "$REPO/repros"
targets=()
for c in "${cases[@]}"; do targets+=("//:${c}_test"); done
echo "== DUMP_AOTI_MINIFIER=1 bazel test ${targets[*]} (all PyTorch debug variables set)"
start=$(date +%s)
set +e
# Two at a time on two cores: each reduction compiles with one g++ at a time
# (AOTI_REDUCE_JOBS=1: one compile server each, so two tests fill the two cores). A third
# slot for the hang, which mostly waits on its hung runs.
jobs=2
[[ " ${cases[*]} " != *"_hang "* ]] || jobs=3
DUMP_AOTI_MINIFIER=1 bazel_cmd test "${targets[@]}" --nocache_test_results --local_test_jobs=$jobs "${test_env[@]}" \
  --test_env=AOTI_REDUCE_JOBS=1 --test_env=AOTI_COMPILE_CACHE_DIR="$CACHE" --sandbox_writable_path="$CACHE" \
  >"$OUT/planted.bazel.log" 2>&1
rc=$?
set -e
echo "  planted tests (packaging, check, reduction): $(( $(date +%s) - start )) s, bazel exit $rc (3: tests failed, as planted)"
[ "$rc" -eq 3 ] || { fail "bazel test of the planted cases exited $rc, expected 3"; tail -30 "$OUT/planted.bazel.log"; }
testlogs="$(bazel info bazel-testlogs 2>/dev/null)"
summary_fields='
import json, sys
s = json.load(open(sys.argv[1]))
print(s["failure_class"].replace(" ", "_"), s["nodes_before"], s["nodes_after"], ",".join(s["ops"]) or "-",
      s["compiles"], round(s["seconds"]), s.get("accuracy", "fp64"))
'
# aoti_reduce and its runner, as the model repository builds them, for --case_dir.
bazel_cmd build @aoti_harness//plugin:aoti_reduce >"$OUT/aoti_reduce.build.log" 2>&1 ||
  { tail -20 "$OUT/aoti_reduce.build.log"; fail "could not build @aoti_harness//plugin:aoti_reduce"; }
aoti_reduce="$(bazel info bazel-bin 2>/dev/null)/external/aoti_harness/plugin/aoti_reduce"
runner="$(bazel info bazel-bin 2>/dev/null)/external/aoti_harness/harness/runner/aoti_runner"
# python repro.py compiles its program once (one g++ at a time): every reduced case's runs
# two at a time on two cores, started here and collected case by case below. They share one
# inductor cache, empty at the start of this run (TORCHINDUCTOR_CACHE_DIR; repro.py keeps
# inductor's precompiled headers there too): the headers and the vector ISA probes are made
# once, and each case's own program is compiled anew (no two cases share a program).
REPRO_INDUCTOR_CACHE="$OUT/repro_inductor_cache"
rm -rf "$REPRO_INDUCTOR_CACHE" && mkdir -p "$REPRO_INDUCTOR_CACHE"
declare -A repro_pid
for c in "${cases[@]}"; do
  zip="$testlogs/${c}_test/test.outputs/outputs.zip"
  out="$OUT/$c.outputs"
  rm -rf "$out" && mkdir -p "$out"
  [ -f "$zip" ] || continue
  unzip -q -o "$zip" -d "$out"
  [ -z "$(verdict_of "$c")" ] && ! not_reproduced "$c" || continue
  summary="$(find "$out" -name summary.json | head -1)"
  [ -n "$summary" ] || continue
  while (( $(jobs -rp | wc -l) >= 2 )); do wait -n || true; done
  TORCHINDUCTOR_CACHE_DIR="$REPRO_INDUCTOR_CACHE" "$AOTI_PYTHON" "$(dirname "$summary")/repro.py" \
    >"$OUT/$c.repro_py.log" 2>&1 &
  repro_pid[$c]=$!
done
not_rows=()
stage_rows=()
case_rows=()
verdict_rows=()
repro_targets=()
declare -A klass_of info_of
for c in "${cases[@]}"; do
  zip="$testlogs/${c}_test/test.outputs/outputs.zip"
  out="$OUT/$c.outputs"
  [ -f "$zip" ] || { fail "$c: no outputs.zip (did the test fail?)"; continue; }
  if [ -n "$(verdict_of "$c")" ]; then
    read -r want_class want_diagnosis want_word < <(verdict_of "$c")
    xml="$testlogs/${c}_test/test.xml"
    got_class="$(grep -oE 'aoti_failure_class(="|" value=")[^"]*"' "$xml" | head -1 | sed 's/.*"\([^"]*\)"$/\1/')"
    got_diagnosis="$(grep -oE 'aoti_diagnosis(="|" value=")[^"]*"' "$xml" | head -1 | sed 's/.*"\([^"]*\)"$/\1/')"
    repro_dirs="$(find "$out" -type d -name repro | wc -l)"
    if [ "${got_class// /_}" = "$want_class" ] && [ "$got_diagnosis" = "$want_diagnosis" ] && [ "$repro_dirs" -eq 0 ] &&
       grep -q "$want_word" "$testlogs/${c}_test/test.log"; then
      words="$(grep -m1 -oE "(it draws random numbers in|recorded when it was built, at|written only in Python:) .*" \
               "$testlogs/${c}_test/test.log" |
               sed -E 's/(; two eager runs|\. Eager, float64|\. The failure|; Python defines it).*//' | cut -c1-170)"
      verdict_rows+=("| $c | $got_class | $got_diagnosis | not reduced | $words |")
    else
      fail "$c: expected class '${want_class//_/ }', diagnosis $want_diagnosis, no repro and '$want_word' in the log; got class '$got_class', diagnosis '$got_diagnosis', $repro_dirs repro dir(s)"
    fi
    continue
  fi
  summary="$(find "$out" -name summary.json | head -1)"
  [ -n "$summary" ] ||
    { fail "$c: outputs.zip has no repro"; grep -E '^\[aoti' "$testlogs/${c}_test/test.log" | tail -5; continue; }
  repro="$(dirname "$summary")"
  if not_reproduced "$c"; then
    # Nothing reduced, and the report says why, in plain words.
    if "$AOTI_PYTHON" -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["reduced"] is not False)' "$summary" &&
       grep -q "a fresh compile of its whole program here" "$repro/report.md" && grep -q "inductor_configs" "$repro/report.md"; then
      # aoti_reduce on the case from outputs.zip says the same and exits 4 (its compiles from the cache).
      set +e
      "$aoti_reduce" minify --case_dir="$(dirname "$repro")" --out="$OUT/$c.case_dir_repro" --python="$AOTI_PYTHON" \
        --aoti_runner="$runner" --aoti_compile_cache_dir="$CACHE" --jobs=1 --noaoti_reduce_standalone_verify \
        >"$OUT/$c.case_dir.log" 2>&1
      rc_case=$?
      set -e
      [ "$rc_case" -eq 4 ] && grep -q "a fresh compile of its whole program here" "$OUT/$c.case_dir_repro/report.md" ||
        fail "$c: aoti_reduce --case_dir exited $rc_case, expected 4 (not reduced) with the reason in report.md"
      not_rows+=("| $c | $rc_case | $(head -c 300 "$repro/report.md" | tail -n +3 | tr '\n' ' ' | cut -c1-120)... |")
    else
      fail "$c: expected report.md to say that a fresh compile does not reproduce the shipped failure"
      cat "$repro/report.md" 2>/dev/null | head -5
    fi
    continue
  fi
  read -r klass before after ops compiles seconds accuracy < <("$AOTI_PYTHON" -c "$summary_fields" "$summary")
  want="$(expected_op "$c")"
  [ "$after" -le 2 ] || fail "$c: the repro has $after nodes, expected at most 2"
  # Where the kernels' names say nothing, inductor's provenance record localizes as the names do.
  [[ "$c" != *_unnamed ]] || [ "$compiles" -le 3 ] ||
    fail "$c: $compiles compiles with the kernels' names off, expected at most 3 (provenance localization)"
  [[ ",$ops," == *",$want."* ]] || fail "$c: the repro's ops ($ops) do not include $want"
  # The stage ladder and the workaround: a stage named, and for an ATen culprit a workaround
  # verified on the original (the op as an ATen fallback makes every planted bug pass).
  ladder_off=0
  [[ " ${LADDER_OFF_CASES[*]} " != *" $c "* ]] || ladder_off=1
  stage_row="$("$AOTI_PYTHON" - "$summary" "$want" "$ladder_off" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])).get("stage", {})
want, problems = sys.argv[2], []
if sys.argv[3] == "1":
    if s.get("ran") or not s.get("why_not", "").startswith("turned off"):
        problems.append("the test turned the stage ladder off, but the summary says: " + json.dumps(s)[:200])
elif not s.get("ran"):
    problems.append("no stage ladder: " + s.get("why_not", "not run"))
elif s.get("stage") in (None, "", "unknown"):
    problems.append("the stage is unknown: " + s.get("stage_reason", ""))
elif want.startswith("aten."):
    fallback = (s.get("workaround") or {}).get("aoti_harness.aten_fallbacks", "")
    if not s.get("workaround_verified") or want not in fallback:
        problems.append("no workaround verified with the op as an ATen fallback: " + s.get("workaround_verdict", ""))
    if s.get("ladder_compiles", 9) + s.get("workaround_compiles", 9) > 6:
        problems.append(f"{s.get('ladder_compiles')} + {s.get('workaround_compiles')} compiles, over 6")
elif not s.get("stage", "").startswith("wrapper and runtime"):
    problems.append("a custom op's stage should be the wrapper and runtime: " + s.get("stage", ""))
cost = "-"
if s.get("run_seconds_after", -1) >= 0:
    cost = f"{s['run_seconds_after']:.2f} s" + (f" (as built {s['run_seconds_before']:.2f} s)" if s.get("run_seconds_before", -1) >= 0 else "")
print(" | ".join([s.get("culprit_op", "-"), s.get("stage") or s.get("why_not") or "-", s.get("workaround_what") or "none",
                  str(s.get("ladder_compiles", "-")), str(s.get("workaround_compiles", "-")),
                  "yes" if s.get("workaround_verified") else "no", cost, f"{s.get('seconds', 0):.0f} s"]) + ("\tPROBLEM: " + "; ".join(problems) if problems else ""))
PY
)"
  [[ "$stage_row" != *PROBLEM* ]] || fail "$c: ${stage_row#*PROBLEM: }"
  stage_rows+=("| $c | ${stage_row%%	PROBLEM*} |")
  # Within the test's own timeout (the rule's default size for the hang): Bazel never had to
  # kill it, and the case and its diagnosis are beside the repro.
  ! grep -qE "^//:${c}_test +TIMEOUT" "$OUT/planted.bazel.log" || fail "$c: Bazel killed the test at its timeout"
  [ -f "$(dirname "$repro")/case.json" ] && [ -f "$(dirname "$repro")/diagnosis.md" ] ||
    fail "$c: outputs.zip lacks the case (case.json) or its diagnosis (diagnosis.md)"
  set +e
  if [ -n "${repro_pid[$c]:-}" ]; then
    wait "${repro_pid[$c]}"
  else
    "$AOTI_PYTHON" "$repro/repro.py" >"$OUT/$c.repro_py.log" 2>&1
  fi
  py=$?
  set -e
  if [ "$py" -eq 1 ]; then
    py_ok=yes
  else
    py_ok="no (exit $py)"
    fail "$c: python repro.py exited $py, expected 1"
    tail -5 "$OUT/$c.repro_py.log"
  fi
  # The torch-only repro the reduction wrote and ran alone (an empty directory, only torch
  # importable): it must reproduce, or, where the repro calls an operator of the team's own
  # library (torch alone cannot run it), say so instead of being written.
  alone_ok="$("$AOTI_PYTHON" - "$summary" "$repro" <<'PY'
import json, os, sys
s = json.load(open(sys.argv[1])).get("standalone") or {}
issue = os.path.exists(os.path.join(sys.argv[2], "upstream_issue.md"))
if s.get("reproduces") and issue:
    print(f"yes ({s.get('lines')} lines, {s.get('seconds', 0):.0f} s)")
elif not s.get("written") and "operators of the libraries" in s.get("why_not", ""):
    print("not written: " + s["why_not"][:80])
else:
    print("PROBLEM: " + (s.get("text") or "no record in summary.json") + ("" if issue else "; no upstream_issue.md"))
PY
)"
  [[ "$alone_ok" != PROBLEM* ]] || fail "$c: repro_standalone.py: ${alone_ok#PROBLEM: }"
  if [ "$accuracy" = assert_close ]; then
    # The test's own rule travels: repro.py judged by it, and the case reduces again from
    # outputs.zip with aoti_reduce --case_dir (its compiles from the shared cache).
    grep -q "under assert_close accuracy" "$OUT/$c.repro_py.log" || fail "$c: repro.py did not judge by assert_close"
    case_dir="$(dirname "$repro")"
    set +e
    "$aoti_reduce" minify --case_dir="$case_dir" --out="$OUT/$c.case_dir_repro" --python="$AOTI_PYTHON" \
      --aoti_runner="$runner" --aoti_compile_cache_dir="$CACHE" --jobs=1 --noaoti_reduce_standalone_verify \
        >"$OUT/$c.case_dir.log" 2>&1
    rc_case=$?
    set -e
    if [ "$rc_case" -eq 0 ] && [ -f "$OUT/$c.case_dir_repro/summary.json" ]; then
      read -r _ _ after2 ops2 compiles2 _ accuracy2 < <("$AOTI_PYTHON" -c "$summary_fields" "$OUT/$c.case_dir_repro/summary.json")
      case_rows+=("| $c | $accuracy2 | $after2 | $ops2 | $compiles2 |")
      [ "$accuracy2" = assert_close ] && [ "$after2" -le 2 ] && [[ ",$ops2," == *",$want."* ]] ||
        fail "$c: aoti_reduce --case_dir gave $after2 nodes ($ops2) under $accuracy2"
    else
      fail "$c: aoti_reduce minify --case_dir exited $rc_case"
      tail -5 "$OUT/$c.case_dir.log"
    fi
  fi
  pkg="repros/${c}_repro"
  rm -rf "$pkg" && mkdir -p "$pkg"
  cp -r "$repro/BUILD.bazel" "$repro/repro_test.cc" "$repro/repro.pt2" "$repro/check_options.json" "$pkg/"
  [ ! -d "$repro/op_libraries" ] || cp -r "$repro/op_libraries" "$pkg/"
  repro_targets+=("//$pkg:repro_test")
  klass_of[$c]="$klass"
  sizes="$(( $(stat -c %s "$repro/repro.pt2" 2>/dev/null || echo 0) / 1024 )) | $(( $(stat -c %s "$zip") / 1024 ))"
  info_of[$c]="${klass//_/ } | $accuracy | $before | $after | $ops | $compiles | $seconds s | $sizes | $py_ok | ${alone_ok#PROBLEM: }"
done
if ((${#repro_targets[@]})); then
  echo "== bazel test ${repro_targets[*]} (the generated repro tests)"
  set +e
  bazel_cmd test "${repro_targets[@]}" --nocache_test_results --local_test_jobs=2 >"$OUT/repro_tests.bazel.log" 2>&1
  set -e
fi
for c in "${cases[@]}"; do
  [ -n "${info_of[$c]:-}" ] || continue
  xml="$testlogs/repros/${c}_repro/repro_test/test.xml"
  # gtest writes the property as an attribute (older) or as <property name= value=> (newer).
  got_class="$(grep -oE 'aoti_failure_class(="|" value=")[^"]*"' "$xml" 2>/dev/null | head -1 | sed 's/.*"\([^"]*\)"$/\1/' || true)"
  if [ "${got_class// /_}" = "${klass_of[$c]}" ]; then
    bt_ok=yes
  else
    bt_ok="no (class '${got_class}')"
    fail "$c: repro_test did not fail under bazel test with class '${klass_of[$c]//_/ }' (got '$got_class')"
  fi
  rows+=("| $c | ${info_of[$c]} | $bt_ok |")
done

if ((${#rows[@]})); then
  echo
  echo "| case | class | rule | nodes before | after | ops left | compiles | reduction | repro.pt2 (kB) | outputs.zip (kB) | repro.py | repro_standalone.py alone | repro_test |"
  echo "| --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- | --- | --- |"
  printf '%s\n' "${rows[@]}"
fi
if ((${#stage_rows[@]})); then
  echo
  echo "| case | culprit | stage | workaround | ladder compiles | workaround compiles | original passes with it | compiled run with it | ladder + workaround |"
  echo "| --- | --- | --- | --- | ---: | ---: | --- | --- | ---: |"
  printf '%s\n' "${stage_rows[@]}"
fi
if ((${#not_rows[@]})); then
  echo
  echo "| case (not reduced, as it must not be) | aoti_reduce --case_dir exit | report.md |"
  echo "| --- | ---: | --- |"
  printf '%s\n' "${not_rows[@]}"
fi
if ((${#verdict_rows[@]})); then
  echo
  echo "| case (no rule can judge it) | class | diagnosis | reduction | the message names |"
  echo "| --- | --- | --- | --- | --- |"
  printf '%s\n' "${verdict_rows[@]}"
fi
if ((${#case_rows[@]})); then
  echo
  echo "| case reduced again by aoti_reduce --case_dir from outputs.zip | rule | nodes after | ops | compiles |"
  echo "| --- | --- | ---: | --- | ---: |"
  printf '%s\n' "${case_rows[@]}"
fi
total=$(( ${#cases[@]} + healthy ))
echo "logs and unzipped outputs: $OUT"
echo "real_models: $((total - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
