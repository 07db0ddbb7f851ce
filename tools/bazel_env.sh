# Sourced by the tools/run_*.sh scripts: runs the set-up (quick when all is present) and
# defines `bazel_cmd`, which runs Bazel with a disk cache outside the checkout so that a
# fresh clone on a warm machine rebuilds nothing.
set -euo pipefail
AOTI_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$AOTI_ROOT/tools/setup.sh"
AOTI_BAZEL_DISK_CACHE="${AOTI_BAZEL_DISK_CACHE:-$HOME/.cache/aoti_harness/bazel-disk}"
mkdir -p "$AOTI_BAZEL_DISK_CACHE"
export AOTI_PYTHON="${AOTI_PYTHON:-${AOTI_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/aoti_harness/venv}/bin/python}"
# The compile ledger (one line per AOTI compile) and the phase timer.
source "$AOTI_ROOT/tools/ci_phases.sh"

# bazel_cmd COMMAND [ARGS...]: bazel COMMAND with the shared disk cache.
# The flags every CI invocation of Bazel shares, whatever its workspace or output base,
# so that the same action has the same key in each (the harness's C++ built for one model
# repository serves the next one through the disk cache): the fixed action environment
# (PATH=/bin:/usr/bin:/usr/local/bin, as --config=remote_cache has it) and the compile
# ledger's path (a fixed one).
# $AOTI_BAZEL_TEST_TIMEOUT, when set, is Bazel's --test_timeout (four values, the sizes'
# timeouts in seconds): CI sets it for the work it runs beside the real-model corpus.
bazel_shared_flags() {
  echo --incompatible_strict_action_env --action_env=AOTI_COMPILE_LEDGER="$AOTI_COMPILE_LEDGER" \
    --test_env=AOTI_COMPILE_LEDGER="$AOTI_COMPILE_LEDGER" \
    ${AOTI_BAZEL_TEST_TIMEOUT:+--test_timeout="$AOTI_BAZEL_TEST_TIMEOUT"}
}

# Builds and tests also get the shared flags and, when $AOTI_CI_STATS_DIR is set, write a
# profile there (Bazel's JSON trace: every action's wall time, for docs/figures.md).
bazel_cmd() {
  local cmd="$1"
  shift
  local extra=()
  case "$cmd" in
    build | test | run | coverage)
      read -r -a extra <<<"$(bazel_shared_flags)"
      if [ -n "${AOTI_CI_STATS_DIR:-}" ]; then
        mkdir -p "$AOTI_CI_STATS_DIR"
        extra+=(--profile="$AOTI_CI_STATS_DIR/profile.$(date +%s%N).json.gz")
      fi ;;
  esac
  command bazel "$cmd" --disk_cache="$AOTI_BAZEL_DISK_CACHE" --repo_env=AOTI_PYTHON="$AOTI_PYTHON" "${extra[@]}" "$@"
}

# suite_cmd COMMAND [ARGS...]: bazel_cmd in the suite's workspace (suite/WORKSPACE), which
# reads the harness as @aoti_harness, as a model repository does: the suite's build of the
# harness's C++ is the one the model repositories of CI take from the disk cache.
# Labels are @aoti_harness//... there (`suite_cmd test @aoti_harness//...`).
suite_cmd() {
  (cd "$AOTI_ROOT/suite" && bazel_cmd "$@")
}
