# Sourced by the tools/run_*.sh scripts: runs the set-up (quick when all is present) and
# defines `bazel_cmd`, which runs Bazel with a disk cache outside the checkout so that a
# fresh clone on a warm machine rebuilds nothing.
set -euo pipefail
AOTI_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$AOTI_ROOT/tools/setup.sh"
AOTI_BAZEL_DISK_CACHE="${AOTI_BAZEL_DISK_CACHE:-$HOME/.cache/aoti_harness/bazel-disk}"
mkdir -p "$AOTI_BAZEL_DISK_CACHE"
export AOTI_PYTHON="${AOTI_PYTHON:-${AOTI_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/aoti_harness/venv}/bin/python}"

# bazel_cmd COMMAND [ARGS...]: bazel COMMAND with the shared disk cache.
bazel_cmd() {
  local cmd="$1"
  shift
  bazel "$cmd" --disk_cache="$AOTI_BAZEL_DISK_CACHE" --repo_env=AOTI_PYTHON="$AOTI_PYTHON" "$@"
}
