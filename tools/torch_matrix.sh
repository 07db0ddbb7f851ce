#!/usr/bin/env bash
# torch_matrix.sh: the harness built and tested on each torch of the matrix, each in a
# virtualenv of its own, and one table of what passed and what differs.
#
# Usage: tools/torch_matrix.sh [--no-corpus] [VERSION...]
#          (default versions: 2.12.1 2.13.0 2.14.1 2.15.0; 2.13.0 is the set-up's torch)
#
# For each version:
#   1. its virtualenv, $AOTI_MATRIX_VENVS/torch-VERSION (default ~/.cache/aoti_harness),
#      made once with torch==VERSION, numpy and transformers (the corpus) from the package
#      index; the machine's pip constraint on torch's version is lifted inside these
#      virtualenvs only. 2.13.0 is the set-up's own virtualenv.
#   2. the harness built against that torch's libtorch (AOTI_PYTHON), in a Bazel output base
#      of its own ($AOTI_MATRIX_OUT/VERSION), so the torches never rebuild each other, and
#      the subset of tests below run there: the check on the example programs (straight
#      line, control flow, a shipped .pt2, the reduction on failure under `bazel test`), the
#      reducer on one planted program per failure class;
#   3. unless --no-corpus, healthy models of the real-model corpus (testdata/real, a model
#      repository through local_repository) under `bazel test` with that torch.
# The table (markdown, also $AOTI_MATRIX_OUT/matrix.md, and matrix.json) says per torch:
# its build, the tests that passed, and what differs from the set-up's torch (inductor's
# configuration: keys added, removed, defaults changed). Logs: $AOTI_MATRIX_OUT/VERSION/*.log.
# Exit status: 0 when every torch built and passed its tests, 1 otherwise, 2 bad usage.
#
# Not in CI's main job (each torch is a cold build of the harness and a few AOTI compiles):
# .ci/torch_matrix runs it as its own job.
source "$(dirname "${BASH_SOURCE[0]}")/bazel_env.sh"
set +e -uo pipefail

CORPUS=1
VERSIONS=()
for arg in "$@"; do
  case "$arg" in
    --no-corpus) CORPUS=0 ;;
    -*) echo "torch_matrix: unknown option '$arg'; expected --no-corpus or torch versions (e.g. 2.12.1)" >&2; exit 2 ;;
    *)
      [[ "$arg" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] \
        || { echo "torch_matrix: '$arg' is not a torch version; expected e.g. 2.12.1" >&2; exit 2; }
      VERSIONS+=("$arg") ;;
  esac
done
((${#VERSIONS[@]})) || VERSIONS=(2.12.1 2.13.0 2.14.1 2.15.0)

SETUP_TORCH="2.13.0"
SETUP_PYTHON="$AOTI_PYTHON"
VENVS="${AOTI_MATRIX_VENVS:-${XDG_CACHE_HOME:-$HOME/.cache}/aoti_harness}"
OUT="${AOTI_MATRIX_OUT:-${XDG_CACHE_HOME:-$HOME/.cache}/aoti_harness/matrix}"
TRANSFORMERS_VERSION="5.23.0"
mkdir -p "$OUT"

# The subset: the check (straight line, derived dims, control flow, a shipped .pt2, the
# reduction on failure through the test's own listener), and the reducer on one planted
# program per class (compile error, runtime error, accuracy, signal; a cond's branch).
CHECK_TESTS=(//testdata:mlp_test //testdata:convbn_test //testdata:derived_dims_test //testdata:aoti_checks_test
             //testdata:control_flow_checks_test //testdata:reduce_on_failure_test
             //testdata/shipped:prebuilt_package_test)
REDUCER_FILTER="Planted/ReduceScenario.ReducesToTheBuggyNode/relu_cos_*:Planted/ReduceScenario.ReducesToTheBuggyNode/block_runtime_error:Planted/ReduceScenario.ReducesToTheBuggyNode/cond_block_relu_accuracy"
# Healthy real models: three families, data-dependent routing, a cond, a while_loop's
# neighbour (a KV cache written in forward), autocast, and the team's shipped .pt2.
CORPUS_TESTS=(//:bert_test //:llama_test //:vit_test //:mixtral_routed_test //:early_exit_test
              //:bert_autocast_test //:cached_decoder_test //:resnet_shipped_test)

log() { echo "[torch_matrix] $*" >&2; }

# venv_for VERSION: the Python of that torch's virtualenv, made (or completed) when missing.
venv_for() {
  local v="$1"
  if [ "$v" = "$SETUP_TORCH" ]; then echo "$SETUP_PYTHON"; return 0; fi
  local venv="$VENVS/torch-$v" have
  [ -x "$venv/bin/python" ] || "${AOTI_BASE_PYTHON:-$(command -v python3.11 || command -v python3)}" -m venv "$venv" \
    || { log "could not create the virtualenv $venv"; return 1; }
  have="$("$venv/bin/python" -c 'import torch, numpy, transformers; print(torch.__version__)' 2>/dev/null || true)"
  if [ "${have%%+*}" != "$v" ]; then
    log "installing torch==$v, numpy, transformers==$TRANSFORMERS_VERSION into $venv (found: ${have:-none})"
    local none="$OUT/no-constraints.txt"
    : > "$none"
    # The machine's pip configuration caps torch's version; here, and only here, it is lifted.
    PIP_CONSTRAINT="$none" "$venv/bin/python" -m pip install -q --disable-pip-version-check \
        "torch==$v" numpy "transformers==$TRANSFORMERS_VERSION" > "$OUT/install-$v.log" 2>&1 \
      || { log "pip could not install torch==$v (see $OUT/install-$v.log)"; return 1; }
  fi
  echo "$venv/bin/python"
}

# bazel_for VERSION PYTHON COMMAND ARGS...: Bazel with that torch, in its own output base
# (the set-up's torch in the workspace's own).
bazel_for() {
  local v="$1" py="$2" cmd="$3"
  shift 3
  local startup=() std=()
  [ "$v" = "$SETUP_TORCH" ] || startup=(--output_base="$OUT/$v/output_base$(basename "$PWD")")
  # torch 2.14's headers need C++20 (std::strong_ordering, concepts); the harness is C++17
  # and builds as C++20 too. A model repository on torch >= 2.14 sets the same two flags.
  needs_cxx20 "$v" && std=(--cxxopt=-std=c++20 --host_cxxopt=-std=c++20)
  bazel "${startup[@]}" "$cmd" --disk_cache="$AOTI_BAZEL_DISK_CACHE" --repo_env=AOTI_PYTHON="$py" "${std[@]}" "$@"
}

# needs_cxx20 VERSION: true for torch 2.14 and later.
needs_cxx20() {
  local major="${1%%.*}" rest="${1#*.}"
  local minor="${rest%%.*}"
  ((major > 2 || (major == 2 && minor >= 14)))
}

# passed LOG: "P/N" from Bazel's summary line of a test run.
passed() {
  "$SETUP_PYTHON" - "$1" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
ran = re.findall(r"Executed \d+ out of (\d+) tests?: (.*)", text)
if not ran:
    print("0/?"); sys.exit()
total, what = int(ran[-1][0]), ran[-1][1]
ok = re.search(r"(\d+) tests? pass", what)
print(f"{int(ok.group(1)) if ok else (total if 'pass' in what and 'fail' not in what else 0)}/{total}")
PY
}

# cases_passed LOG: "P/N" of the GoogleTest cases in a run with --test_output=all.
cases_passed() {
  "$SETUP_PYTHON" - "$1" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
ran = sum(int(n) for n in re.findall(r"\[=+\] (\d+) tests? from \d+ test suites? ran", text))
ok = len(re.findall(r"^\[ +OK \] ", text, re.M))
print(f"{ok}/{ran}" if ran else "0/?")
PY
}

# write_table ROW...: matrix.md and matrix.json from the rows so far (rewritten after each
# torch, so a run cut short keeps what it measured): each torch, and what differs from the
# set-up's torch.
write_table() {
  "$SETUP_PYTHON" - "$OUT" "$SETUP_TORCH" "$@" > "$OUT/matrix.md" <<'PY'
import json, os, sys
out, reference, rows = sys.argv[1], sys.argv[2], sys.argv[3:]
def probe(v):
    try:
        return json.loads(open(os.path.join(out, v, "probe.json")).read().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return None
ref = probe(reference)
data = []
print("| torch | build | CUDA | the check (tests) | reducer, planted classes (cases) | real models, healthy (tests) | s | inductor config vs %s |" % reference)
print("| --- | --- | --- | ---: | ---: | ---: | ---: | --- |")
for row in rows:
    v, build, check, reducer, corpus, secs = row.split("|")
    p = probe(v)
    differs = ""
    if p and ref and v != reference:
        # Inductor's private bookkeeping (keys starting with "_") left out, as bisect-torch does.
        a, b = ({k: v for k, v in c.get("inductor_config", {}).items()
                 if not any(part.startswith("_") for part in k.split("."))}
                for c in (ref, p))
        added = sorted(set(b) - set(a)); removed = sorted(set(a) - set(b))
        changed = sorted(k for k in set(a) & set(b) if a[k] != b[k])
        differs = f"{len(added)} keys added, {len(removed)} removed, {len(changed)} defaults changed"
        def change(k):
            was, now = repr(a[k]), repr(b[k])
            return f"`{k}` {was}→{now}" if len(was) + len(now) < 40 else f"`{k}`"
        if changed:
            differs += ": " + ", ".join(change(k) for k in changed[:4]) + (" ..." if len(changed) > 4 else "")
    elif v == reference:
        differs = "(the set-up's torch)"
    cuda = (p or {}).get("cuda") or "CPU"
    version = (p or {}).get("version", v)
    print(f"| {version} | {build} | {cuda} | {check} | {reducer} | {corpus} | {secs} | {differs} |")
    data.append({"torch": version, "build": build, "cuda": cuda, "check": check, "reducer": reducer,
                 "corpus": corpus, "seconds": int(secs) if secs.isdigit() else None, "inductor_config_vs_setup": differs})
json.dump(data, open(os.path.join(out, "matrix.json"), "w"), indent=1)
PY
}

failures=0
rows=()
# The set-up's torch is the reference of the table's last column, in the matrix or not.
mkdir -p "$OUT/$SETUP_TORCH"
"$SETUP_PYTHON" "$AOTI_ROOT/tools/torch_probe.py" --config > "$OUT/$SETUP_TORCH/probe.json" 2> "$OUT/$SETUP_TORCH/probe.log" \
  || log "the set-up's torch cannot be probed (see $OUT/$SETUP_TORCH/probe.log); the table says no differences"
for v in "${VERSIONS[@]}"; do
  mkdir -p "$OUT/$v"
  start=$(date +%s)
  log "== torch $v"
  if ! py="$(venv_for "$v")"; then
    rows+=("$v|not installed (see $OUT/install-$v.log)|-|-|-|-")
    failures=$((failures + 1))
    write_table "${rows[@]}"
    continue
  fi
  "$py" "$AOTI_ROOT/tools/torch_probe.py" --config > "$OUT/$v/probe.json" 2> "$OUT/$v/probe.log" \
    || { log "torch $v cannot be imported (see $OUT/$v/probe.log)"; rows+=("$v|torch does not import|-|-|-|-"); failures=$((failures + 1)); write_table "${rows[@]}"; continue; }
  build="ok"
  (cd "$AOTI_ROOT" && bazel_for "$v" "$py" build //plugin:aoti_reduce //harness/runner:aoti_runner) > "$OUT/$v/build.log" 2>&1 \
    || { build="fails (see $OUT/$v/build.log)"; failures=$((failures + 1)); }
  check="-" reducer="-" corpus="-"
  if [ "$build" = ok ]; then
    log "torch $v: the check's tests"
    (cd "$AOTI_ROOT" && bazel_for "$v" "$py" test --keep_going "${CHECK_TESTS[@]}") > "$OUT/$v/check.log" 2>&1 || failures=$((failures + 1))
    check="$(passed "$OUT/$v/check.log")"
    log "torch $v: the reducer on the planted classes"
    (cd "$AOTI_ROOT" && bazel_for "$v" "$py" test //reducer:reducer_test --test_filter="$REDUCER_FILTER" \
        --test_sharding_strategy=disabled --test_output=all) > "$OUT/$v/reducer.log" 2>&1 || failures=$((failures + 1))
    reducer="$(cases_passed "$OUT/$v/reducer.log")"
    if ((CORPUS)); then
      log "torch $v: the real-model corpus' healthy models"
      (cd "$AOTI_ROOT/testdata/real" && bazel_for "$v" "$py" test --keep_going "${CORPUS_TESTS[@]}") > "$OUT/$v/corpus.log" 2>&1 \
        || failures=$((failures + 1))
      corpus="$(passed "$OUT/$v/corpus.log")"
    fi
  fi
  rows+=("$v|$build$(needs_cxx20 "$v" && echo ' (C++20)')|$check|$reducer|$corpus|$(( $(date +%s) - start ))")
  write_table "${rows[@]}"
  # Each torch's Bazel server goes once its tests are done (memory for the next).
  [ "$v" = "$SETUP_TORCH" ] || for ws in "$AOTI_ROOT" "$AOTI_ROOT/testdata/real"; do
    (cd "$ws" && bazel --output_base="$OUT/$v/output_base$(basename "$ws")" shutdown) > /dev/null 2>&1 || true
  done
done

cat "$OUT/matrix.md"
log "logs, matrix.md and matrix.json: $OUT"
((failures == 0)) || { log "$failures step(s) failed"; exit 1; }
