#!/usr/bin/env bash
# fuzz.sh: runs the reader fuzzers (fuzz/) under libFuzzer, ASan and UBSan, seeded from
# the corpus, and prints a table: target, executions, seconds, crashes.
#
#   bash tools/fuzz.sh [--seconds N | --runs N] [TARGET ...]
#
# --seconds N: each target runs N seconds (default 30, the CI smoke test).
# --runs N:    each target runs N executions (the note's figure: --runs 1000000).
# TARGET: pt2_archive, program_json, sym_expr (size expressions), package_manifest, case_file, raw_tensor, interpreter
# (programs that parse but are wrong, run by the eager interpreter) (default: all), two at a
# time (AOTI_FUZZ_PARALLEL).
# Everything goes to $AOTI_FUZZ_OUT (default $TMPDIR/aoti_fuzz): per target its seeds,
# the corpus libFuzzer grows, the log, and any crashing input (crash-*, leak-*, ...).
# Exit status 1 when any target crashed, leaked, ran out of memory or hung past 30 s; the
# table names the input to replay it with. Slow units (over 10 s of wall time, which a
# loaded machine produces) are counted in their own column and fail nothing.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bazel_env.sh"
cd "$AOTI_ROOT"

ALL=(pt2_archive program_json sym_expr package_manifest case_file raw_tensor interpreter)
limit=(-max_total_time=30)
limit_text="30 s each"
targets=()
while (($#)); do
  case "$1" in
    --seconds) limit=(-max_total_time="$2"); limit_text="$2 s each"; shift 2 ;;
    --runs) limit=(-runs="$2"); limit_text="$2 executions each"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *)
      if [[ " ${ALL[*]} " != *" $1 "* ]]; then
        echo "fuzz.sh: unknown target '$1'; expected one of: ${ALL[*]}" >&2
        exit 2
      fi
      targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=("${ALL[@]}")
command -v clang >/dev/null || { echo "fuzz.sh: clang is missing; run bash tools/setup.sh" >&2; exit 2; }

out="${AOTI_FUZZ_OUT:-${TMPDIR:-/tmp}/aoti_fuzz}"
mkdir -p "$out"
echo "[fuzz] seeds from the corpus" >&2
# The suite's packages (suite/: built by `bazel test` of the suite, so nothing compiles here).
suite_cmd build @aoti_harness//testdata/corpus @aoti_harness//testdata:mlp >"$out/seed_build.log" 2>&1 \
  || { tail -20 "$out/seed_build.log"; exit 1; }
corpus_dir="$(cd "$AOTI_ROOT/suite" && bazel info bazel-bin 2>/dev/null)/external/aoti_harness/testdata"
"$AOTI_PYTHON" - "$out" "$corpus_dir" <<'PY'
import glob, json, os, sys, zipfile
out, bin_dir = sys.argv[1], sys.argv[2]
archives = sorted(glob.glob(os.path.join(bin_dir, "corpus", "*.pt2")))
archives = [a for a in archives if not a.endswith("_aoti.pt2")] + [os.path.join(bin_dir, "mlp.pt2")]
def seed(target, name, data):
    d = os.path.join(out, target, "seeds")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
for a in archives:
    stem = os.path.basename(a)[:-4]
    if os.path.getsize(a) < 200_000:
        seed("pt2_archive", stem + ".pt2", open(a, "rb").read())
    with zipfile.ZipFile(a) as z:
        names = z.namelist()
        model = next((n for n in names if n.endswith("/models/model.json")), None)
        manifest = next((n for n in names if n.endswith("extra/aoti_harness/package.json")), None)
        if model:
            seed("program_json", stem + ".json", z.read(model))
            seed("interpreter", stem + ".json", z.read(model))
            # The size expressions the program carries (as_expr.expr_str), one seed each.
            def exprs(node):
                if isinstance(node, dict):
                    for k, v in node.items():
                        if k == "expr_str" and isinstance(v, str):
                            yield v
                        else:
                            yield from exprs(v)
                elif isinstance(node, list):
                    for v in node:
                        yield from exprs(v)
            for k, e in enumerate(sorted(set(exprs(json.loads(z.read(model)))))[:20]):
                seed("sym_expr", f"{stem}_{k}", e)
        if manifest:
            m = json.loads(z.read(manifest))
            seed("package_manifest", stem + ".json", z.read(manifest))
            for rec in m.get("inputs", [])[:2]:
                data = z.read(next(n for n in names if n.endswith("aoti_harness/" + rec["file"])))
                if len(data) <= 8192:
                    seed("raw_tensor", f"{stem}_{rec['name']}", json.dumps(rec).encode() + b"\n" + data)
# Size expressions at the edges: int64's limits, division, Pow, nesting.
for k, e in enumerate([
        "Mul(Integer(2), Symbol('u0', integer=True))",
        "FloorDiv(Integer(-9223372036854775808), Integer(-1))",
        "PythonMod(Symbol('s0', positive=True, integer=True), Integer(3))",
        "Pow(Symbol('s1', integer=True), Integer(62))",
        "CleanDiv(Add(Symbol('u1', integer=True), Integer(-1)), Integer(2))",
        "Max(Integer(1), Min(Symbol('u2', integer=True), Integer(9223372036854775807)))",
        "Add(" * 40 + "Integer(1)" + ", Integer(1))" * 40]):
    seed("sym_expr", f"edge_{k}", e)
for k, case in enumerate([
        {"format": "aoti_harness.case/1", "test": "AotiModel.CompiledMatchesEager", "package": "original.pt2",
         "model": "model", "failure_class": "accuracy", "message": "output 0 differs",
         "accuracy": {"mode": "fp64", "tolerance": 0.001}, "inductor_configs": {}, "inputs": "inputs"},
        {"format": "aoti_harness.case/1", "package": "/abs/original.pt2", "failure_class": "compile error",
         "check_str": "error:", "accuracy": {"mode": "strict", "tolerance": 0.0001}},
        {"package": "p.pt2"},
        {"format": "aoti_harness.case/2", "test": "UserOptions.AssertCloseMode", "package": "original.pt2",
         "failure_class": "accuracy", "message": "1 of 1 outputs differ", "check_str": "", "inputs": "inputs",
         "inductor_configs": {"cpp.inject_log1p_bug_TESTING_ONLY": "accuracy"}, "device": "cpu",
         "check_options": {"model": "encoder", "judged_outputs": 0,
                           "accuracy": {"mode": "assert_close", "tolerance": 0.001, "rtol": 1e-05, "atol": 1e-05,
                                        "ignore_non_fp": False, "exact_non_fp": True},
                           "runner": {"isolation": "child", "timeout_s": 150.0, "op_libraries": ["op_libraries/libops.so"],
                                      "runtime_check_inputs": False, "env": ["OMP_NUM_THREADS=1"],
                                      "env_pass_through": []}}}]):
    seed("case_file", f"case_{k}.json", json.dumps(case, indent=1))
PY

echo "[fuzz] building the fuzzers (clang, libFuzzer, ASan, UBSan)" >&2
bazel_cmd build --config=fuzz --symlink_prefix=/ $(printf ' //fuzz:%s_fuzzer' "${targets[@]}") >"$out/fuzz_build.log" 2>&1 \
  || { tail -30 "$out/fuzz_build.log"; exit 1; }
fuzz_bin="$(bazel info --config=fuzz bazel-bin 2>/dev/null)/fuzz"

# Whole archives need room; the JSON readers are fuzzed faster on smaller inputs.
max_len() { case "$1" in pt2_archive|interpreter) echo 65536 ;; case_file|sym_expr) echo 4096 ;; *) echo 16384 ;; esac; }

# Two targets at a time: each libFuzzer run is one process on one core.
parallel="${AOTI_FUZZ_PARALLEL:-2}"
for t in "${targets[@]}"; do
  dir="$out/$t"
  mkdir -p "$dir/corpus" "$dir/crashes"
  echo "[fuzz] $t: $limit_text" >&2
  # Inputs from earlier runs stay where they are (they are the user's to replay); this
  # run counts only what it writes itself.
  touch "$dir/.run_started"
  rm -f "$dir/.exit_status"
  while (( $(jobs -rp | wc -l) >= parallel )); do wait -n || true; done
  (
    set +e
    ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1" UBSAN_OPTIONS="print_stacktrace=1" \
      "$fuzz_bin/${t}_fuzzer" "${limit[@]}" -rss_limit_mb=4096 -max_len="$(max_len "$t")" -timeout=30 -report_slow_units=10 \
      -artifact_prefix="$dir/crashes/" -print_final_stats=1 "$dir/corpus" "$dir/seeds" >"$dir/log.txt" 2>&1
    echo $? >"$dir/.exit_status"
  ) &
done
wait

status=0
rows=()
for t in "${targets[@]}"; do
  dir="$out/$t"
  since="$dir/.run_started"
  rc="$(cat "$dir/.exit_status" 2>/dev/null || echo "?")"
  runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/log.txt" | grep -o '[0-9]*$' | tail -1)"
  secs="$(grep -o 'Done [0-9]* runs in [0-9]* second' "$dir/log.txt" | grep -o 'in [0-9]*' | grep -o '[0-9]*' | tail -1)"
  # A slow unit (one input over -report_slow_units seconds, wall time) is not a fault: on a
  # loaded machine any input can be. It is listed, and fails nothing; a real hang is a
  # timeout-* past -timeout and fails the run like a crash, leak or out-of-memory.
  crashes="$(find "$dir/crashes" -type f -newer "$since" ! -name 'slow-unit-*' | wc -l)"
  slow="$(find "$dir/crashes" -type f -newer "$since" -name 'slow-unit-*' | wc -l)"
  if [ "$rc" != 0 ] || [ "$crashes" -ne 0 ]; then
    status=1
    first="$(find "$dir/crashes" -type f -newer "$since" ! -name 'slow-unit-*' | head -1)"
    rows+=("| $t | ${runs:-?} | ${secs:-?} | $crashes (exit $rc) | $slow | ${first:-see $dir/log.txt} |")
  else
    first="$(find "$dir/crashes" -type f -newer "$since" -name 'slow-unit-*' | head -1)"
    rows+=("| $t | ${runs:-?} | ${secs:-?} | 0 | $slow | ${first} |")
  fi
done
echo
echo "| target | executions | seconds | crashes | slow units (not a failure) | input |"
echo "| --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
echo
echo "[fuzz] logs, corpora and crashing inputs: $out/<target>/" >&2
exit "$status"
