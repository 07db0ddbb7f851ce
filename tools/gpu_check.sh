#!/usr/bin/env bash
# gpu_check.sh: the GPU check, for a machine with a GPU and no Bazel. It builds the harness
# with CMake and ninja (tools/gpu_check/CMakeLists.txt) against the torch of python3 (or
# $AOTI_PYTHON), packages testdata/mlp.py for the GPU four times, and runs the generic
# model test on each package, as `aoti_model_test` with DUMP_AOTI_MINIFIER=1 would:
#   - the healthy model passes;
#   - each planted Triton bug (triton.inject_relu_bug_TESTING_ONLY = compile_error,
#     runtime_error, accuracy) is caught with its failure class and reduced to the relu
#     it was planted in;
#   - each repro's `python repro.py` reproduces the failure on the GPU.
# It prints one table (model, class, verdict, nodes before and after, compiles, seconds)
# and writes it, with the logs, under --out.
#
# Usage:
#   bash tools/gpu_check.sh --prepare   here, where the Debian packages are: copies GoogleTest's
#                                       sources, gflags, glog (and libunwind) and nlohmann-json
#                                       into .gpu_deps/ (ignored by git, about 5 MB), which
#                                       travels to the GPU machine with the checkout
#   bash tools/gpu_check.sh [--out DIR] [--build DIR] [--device cuda|cpu]
#                                       on the GPU machine. --device cpu rehearses the same
#                                       steps on the CPU with the C++ kernels' planted bugs
#                                       (cpp.inject_relu_bug_TESTING_ONLY), where there is no GPU.
# Exit status: 0 when every check holds, 1 when one does not, 2 for a usage or set-up
# error, 77 when --device cuda finds no GPU (skipped, not passed).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPS="$REPO/.gpu_deps"
OUT="${OUT:-/tmp/aoti_gpu_check}"
BUILD="/tmp/aoti_gpu_check_build"
DEVICE="cuda"
PREPARE=0
while (($#)); do
  case "$1" in
    --prepare) PREPARE=1 ;;
    --out) OUT="$2"; shift ;;
    --build) BUILD="$2"; shift ;;
    --device) DEVICE="$2"; shift ;;
    *) echo "gpu_check: unknown argument '$1'; expected --prepare, --out DIR, --build DIR or --device cuda|cpu" >&2; exit 2 ;;
  esac
  shift
done
log() { echo "[gpu_check $(date +%H:%M:%S)] $*" >&2; }
die() { echo "[gpu_check] ERROR: $*" >&2; exit 2; }

if [ "$PREPARE" = 1 ]; then
  rm -rf "$DEPS"
  mkdir -p "$DEPS/include" "$DEPS/lib"
  [ -f /usr/src/googletest/CMakeLists.txt ] || die "/usr/src/googletest is missing; run bash tools/setup.sh (libgtest-dev)"
  cp -r /usr/src/googletest "$DEPS/googletest"
  for d in gflags glog nlohmann; do
    [ -d "/usr/include/$d" ] || die "/usr/include/$d is missing; run bash tools/setup.sh"
    cp -r "/usr/include/$d" "$DEPS/include/"
  done
  lib=/usr/lib/x86_64-linux-gnu
  # The libraries under their sonames and their link names (glog needs libunwind).
  for so in libglog.so.1 libgflags.so.2.2 libunwind.so.8; do
    [ -e "$lib/$so" ] || die "$lib/$so is missing; run bash tools/setup.sh"
    cp -L "$lib/$so" "$DEPS/lib/$so"
  done
  ln -sf libglog.so.1 "$DEPS/lib/libglog.so"
  ln -sf libgflags.so.2.2 "$DEPS/lib/libgflags.so"
  log "prepared $DEPS ($(du -sh "$DEPS" | cut -f1)); carry .gpu_deps to the GPU machine with the checkout"
  exit 0
fi

PY="${AOTI_PYTHON:-python3}"
command -v "$PY" >/dev/null || die "no $PY; set AOTI_PYTHON to a Python with torch"
[ -d "$DEPS/googletest" ] || die "$DEPS is missing; run 'bash tools/gpu_check.sh --prepare' where the Debian packages are, and bring .gpu_deps along"
case "$DEVICE" in
  cuda) BUG_CONFIG="triton.inject_relu_bug_TESTING_ONLY" ;;
  cpu) BUG_CONFIG="cpp.inject_relu_bug_TESTING_ONLY" ;;
  *) die "--device $DEVICE: expected cuda or cpu" ;;
esac
read -r TORCH_VERSION TORCH_CUDA HAS_CUDA GPU_NAME < <("$PY" -c '
import torch
ok = torch.cuda.is_available()
print(torch.__version__, torch.version.cuda, int(ok), (torch.cuda.get_device_name(0) if ok else "none").replace(" ", "_"))')
if [ "$DEVICE" = cuda ] && [ "$HAS_CUDA" != 1 ]; then
  echo "gpu_check: SKIPPED: $PY's torch $TORCH_VERSION (CUDA $TORCH_CUDA) sees no CUDA device; run it on a GPU machine, or rehearse with --device cpu" >&2
  exit 77
fi
mkdir -p "$OUT"
start=$(date +%s)
log "torch $TORCH_VERSION (CUDA $TORCH_CUDA), device $DEVICE ($GPU_NAME), $(nproc) cores; output in $OUT"

# 1. The harness, built against this torch.
command -v cmake >/dev/null || die "cmake is missing"
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
prefix="$("$PY" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
# Unoptimised by default: the build is most of the check's time, and the harness' own
# speed is not what it checks (CMAKE_BUILD_TYPE=Release in the environment overrides).
cmake_args=(-DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-}" -DCMAKE_PREFIX_PATH="$prefix" -DREPO="$REPO" -DDEPS="$DEPS")
if [ "$TORCH_CUDA" != None ]; then
  # torch's CMake config looks for the CUDA toolkit (nvcc's), and for NVRTC, which a
  # trimmed toolkit lacks and the wheel's nvidia packages carry.
  nvcc="$(command -v nvcc || true)"
  [ -n "$nvcc" ] || die "torch is a CUDA build and nvcc is not on PATH; install the CUDA toolkit or set PATH"
  # The toolkit's root: CUDA_HOME, else nvcc's (when nvcc is not a wrapper elsewhere),
  # else /usr/local/cuda; the one whose include/ has cuda_runtime.h.
  cuda_root=""
  for root in "${CUDA_HOME:-}" "$(dirname "$(dirname "$(readlink -f "$nvcc")")")" /usr/local/cuda; do
    if [ -n "$root" ] && [ -f "$root/include/cuda_runtime.h" ]; then cuda_root="$root"; break; fi
  done
  [ -n "$cuda_root" ] || die "no CUDA toolkit with include/cuda_runtime.h (CUDA_HOME, nvcc's, /usr/local/cuda); set CUDA_HOME"
  cmake_args+=(-DCUDA_TOOLKIT_ROOT_DIR="$cuda_root")
  if ! ls "$cuda_root"/lib*/libnvrtc.so* >/dev/null 2>&1; then
    nvrtc="$("$PY" -c 'import glob, os, torch; d = os.path.dirname(os.path.dirname(torch.__file__)); print((sorted(glob.glob(d + "/nvidia/*/lib/libnvrtc.so*")) or [""])[0])')"
    [ -n "$nvrtc" ] && cmake_args+=(-DCUDA_nvrtc_LIBRARY="$nvrtc")
  fi
fi
t0=$(date +%s)
log "building the harness with cmake (${generator[*]:-make}) in $BUILD"
if ! { cmake -S "$REPO/tools/gpu_check" -B "$BUILD" "${generator[@]}" "${cmake_args[@]}" &&
       cmake --build "$BUILD" --parallel "$(nproc)" --target gpu_model_test aoti_runner aoti_reduce; } > "$OUT/build.log" 2>&1; then
  tail -n 40 "$OUT/build.log" >&2
  die "the harness did not build; see $OUT/build.log"
fi
build_s=$(( $(date +%s) - t0 ))
log "built in ${build_s}s"
export LD_LIBRARY_PATH="$DEPS/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# 2. The packages: one healthy, one per planted bug, compiled for the device.
declare -A CONFIG=([healthy]="{}" [compile_error]="{\"$BUG_CONFIG\": \"compile_error\"}"
                   [runtime_error]="{\"$BUG_CONFIG\": \"runtime_error\"}" [accuracy]="{\"$BUG_CONFIG\": \"accuracy\"}")
declare -A EXPECT=([healthy]="passes" [compile_error]="compile error" [runtime_error]="runtime error" [accuracy]="accuracy")
MODELS=(healthy compile_error runtime_error accuracy)
device_args=(); [ "$DEVICE" = cuda ] && device_args=(--device cuda)
t0=$(date +%s)
pids=()
for m in "${MODELS[@]}"; do
  "$PY" "$REPO/tools/package_model.py" --model "$REPO/testdata/mlp.py" --label "testdata/mlp.py ($m)" \
    --out "$OUT/mlp_$m.pt2" --inductor-configs "${CONFIG[$m]}" "${device_args[@]}" > "$OUT/package_$m.log" 2>&1 &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { tail -n 30 "$OUT/package_${MODELS[$i]}.log" >&2; die "packaging ${MODELS[$i]} failed; see $OUT/package_${MODELS[$i]}.log"; }
done
package_s=$(( $(date +%s) - t0 ))
log "packaged ${#MODELS[@]} models in ${package_s}s"

# 3. The generic model test on each, reducing what fails; then each repro's repro.py.
summary() {  # a field of a JSON file (summary.json, case.json), or "-" (lists joined, seconds to one decimal)
  "$PY" -c '
import json, sys
v = json.load(open(sys.argv[1])).get(sys.argv[2], "-")
print(", ".join(map(str, v)) if isinstance(v, list) else round(v, 1) if isinstance(v, float) else v)' "$1" "$2" 2>/dev/null || echo "-"
}
run_test() {  # the model test of package $1, the reducer on; rc and seconds beside its outputs
  local m="$1" outputs="$OUT/test_$1" t0 rc
  rm -rf "$outputs"; mkdir -p "$outputs/tmp"
  t0=$(date +%s)
  set +e
  TEST_UNDECLARED_OUTPUTS_DIR="$outputs" TEST_TMPDIR="$outputs/tmp" \
    timeout 420 "$BUILD/gpu_model_test" --aoti_package="$OUT/mlp_$m.pt2" --aoti_runner="$BUILD/aoti_runner" \
      --aoti_python="$(command -v "$PY")" --aoti_compile_server="$REPO/tools/compile_server.py" \
      --aoti_reduce_on_failure --aoti_reduce_time_budget_s=300 --gtest_output="xml:$outputs/test.xml" \
      > "$OUT/test_$m.log" 2>&1
  rc=$?
  set -e
  echo "$rc" > "$outputs/rc"
  echo $(( $(date +%s) - t0 )) > "$outputs/seconds"
}
run_repro() {  # python repro.py in the repro of package $1's test, if there is one
  local repro rc
  repro="$(find "$OUT/test_$1" -name summary.json -path '*/repro/*' | head -n 1)"
  [ -n "$repro" ] || return 0
  set +e
  (cd "$(dirname "$repro")" && timeout 300 "$PY" repro.py > "$OUT/repro_$1.log" 2>&1)
  rc=$?
  set -e
  echo "$rc" > "$OUT/test_$1/repro_rc"
}
# At once on a machine with the cores for it (each test runs its own compile server);
# AOTI_GPU_CHECK_AT_ONCE=1 or 0 decides instead.
t0=$(date +%s)
at_once="${AOTI_GPU_CHECK_AT_ONCE:-$(( $(nproc) >= 8 ? 1 : 0 ))}"
if [ "$at_once" = 1 ]; then
  for m in "${MODELS[@]}"; do run_test "$m" & done; wait
  log "ran ${#MODELS[@]} model tests at once in $(( $(date +%s) - t0 ))s"
  for m in "${MODELS[@]}"; do [ "$m" = healthy ] || run_repro "$m" & done; wait
else
  for m in "${MODELS[@]}"; do run_test "$m"; log "mlp ($m): tested in $(cat "$OUT/test_$m/seconds")s"; done
  for m in "${MODELS[@]}"; do [ "$m" = healthy ] || run_repro "$m"; done
fi
tests_s=$(( $(date +%s) - t0 ))

failures=0
table="| model | expected | class | case device | verdict | nodes before → after | culprit | compiles | reduction s | test s | repro.py |"$'\n'
table+="| --- | --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | --- |"$'\n'
for m in "${MODELS[@]}"; do
  outputs="$OUT/test_$m"
  rc="$(cat "$outputs/rc" 2>/dev/null || echo '?')"
  seconds="$(cat "$outputs/seconds" 2>/dev/null || echo '?')"
  case_json="$(find "$outputs" -name case.json -path '*aoti*' -not -path '*/repro/*' | head -n 1)"
  cls="passes" case_device="-"
  [ -z "$case_json" ] || case_device="$(summary "$case_json" device)"
  if [ "$rc" != 0 ]; then
    cls="rc $rc, no case"
    [ -z "$case_json" ] || cls="$(summary "$case_json" failure_class)"
  fi
  repro="$(find "$outputs" -name summary.json -path '*/repro/*' | head -n 1)"
  before="-" after="-" culprit="-" compiles="-" reduce_s="-" repro_py="-"
  verdict="ok"
  [ "$cls" = "${EXPECT[$m]}" ] || verdict="FAILED: expected ${EXPECT[$m]}"
  # The recorded case keeps the package's device (cuda:0 for a GPU package).
  if [ "$m" != healthy ] && [[ "$case_device" != "$DEVICE"* ]]; then verdict="FAILED: case.json device $case_device"; fi
  if [ "$m" != healthy ]; then
    if [ -z "$repro" ]; then
      verdict="FAILED: no repro"
    else
      before="$(summary "$repro" nodes_before)" after="$(summary "$repro" nodes_after)"
      culprit="$(summary "$repro" culprit)" compiles="$(summary "$repro" compiles)" reduce_s="$(summary "$repro" seconds)"
      ops="$(summary "$repro" ops)"
      [[ "$culprit" == *relu* || "$ops" == *relu* ]] || verdict="FAILED: the repro lost the relu (ops: $ops)"
      repro_rc="$(cat "$outputs/repro_rc" 2>/dev/null || echo '?')"
      if [ "$repro_rc" = 1 ] && grep -q "REPRODUCES" "$OUT/repro_$m.log"; then repro_py="reproduces"
      else repro_py="exit $repro_rc"; verdict="FAILED: repro.py did not reproduce"; fi
    fi
  fi
  [ "$verdict" = ok ] || failures=$((failures + 1))
  table+="| mlp ($m) | ${EXPECT[$m]} | $cls | $case_device | $verdict | $before → $after | $culprit | $compiles | $reduce_s | $seconds | $repro_py |"$'\n'
  log "mlp ($m): $cls, $verdict"
done

total_s=$(( $(date +%s) - start ))
{
  echo "# GPU check: $(date -u +%Y-%m-%dT%H:%MZ), device $DEVICE ($GPU_NAME), torch $TORCH_VERSION (CUDA $TORCH_CUDA)"
  echo
  echo "Build ${build_s}s, packaging ${package_s}s (4 models at once), model tests and repro.py ${tests_s}s, total ${total_s}s. Planted bugs: $BUG_CONFIG."
  echo
  printf '%s' "$table"
} | tee "$OUT/gpu_check.md"
if ((failures)); then
  log "$failures check(s) FAILED; logs in $OUT"
  exit 1
fi
log "every check holds"
