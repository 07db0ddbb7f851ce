#!/usr/bin/env bash
# setup.sh: installs everything aoti_harness needs on a fresh Debian machine.
#
# Idempotent and quick when everything is present: it checks before it installs.
#   - Debian packages: Bazel 4.2.3 (bazel-bootstrap) and its offline rule sets,
#     GoogleTest/GoogleMock, gflags, glog, nlohmann-json, clang (the fuzzers), Graphviz
#     (report.html's graphs), Chromium (report.html's render test).
#   - A virtualenv at $AOTI_VENV (default: ~/.cache/aoti_harness/venv) with torch==2.13.0
#     and transformers==5.23.0 (the real-model corpus; nothing is downloaded from a hub),
#     torchao==0.18.0 (the corpus's int8 model, quantized by PyTorch's PT2E flow).
#     It lives outside the checkout so that every clone shares it, and Bazel's disk cache
#     (keyed on the interpreter's path) stays warm across clones.
#   - With --cuda, also a second virtualenv at $AOTI_CUDA_VENV (default:
#     ~/.cache/aoti_harness/venv-cuda) with a CUDA build of torch ($CUDA_TORCH_VERSION,
#     CUDA 13, about 5.4 GB) for `bazel build --config=cuda`. CI and the default build
#     never need it.
# Exits non-zero with a message naming what is missing when it cannot install.
set -euo pipefail

WITH_CUDA=0
for arg in "$@"; do
  case "$arg" in
    --cuda) WITH_CUDA=1 ;;
    *) echo "[setup] ERROR: unknown argument '$arg'; expected --cuda or nothing" >&2; exit 2 ;;
  esac
done

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${AOTI_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/aoti_harness/venv}"
TORCH_VERSION="2.13.0"
CUDA_VENV="${AOTI_CUDA_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/aoti_harness/venv-cuda}"
# The CUDA build of torch for --config=cuda: PyPI's default build (CUDA 13).
CUDA_TORCH_VERSION="2.14.1"
# The real-model corpus (testdata/real) builds small random transformers models.
TRANSFORMERS_VERSION="5.23.0"
# The int8 model of the corpus is quantized by the PT2E flow, which lives in torchao.
TORCHAO_VERSION="0.18.0"
# clang and its runtimes: the reader fuzzers (libFuzzer, ASan, UBSan; tools/fuzz.sh).
# graphviz: report.html's graphs (dot to SVG). chromium and a font: report.html opened in
# a headless browser by its tests (tools/check_report_html.sh). libxml2-utils: xmllint,
# which checks the CI collector's test.xml against the JUnit schema (tools/ci_lint.sh).
APT_PACKAGES=(bazel-bootstrap bazel-platforms bazel-rules-java libgtest-dev libgmock-dev
              libgflags-dev libgoogle-glog-dev nlohmann-json3-dev libssl-dev zip unzip clang libclang-rt-14-dev
              graphviz chromium fonts-dejavu-core libxml2-utils)

log() { echo "[setup] $*" >&2; }
die() { echo "[setup] ERROR: $*" >&2; exit 1; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || die "not root and no sudo; install as root: apt-get install ${missing[*]}"
    SUDO=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null || die "apt-get update failed; packages still needed: ${missing[*]}"
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install failed for: ${missing[*]}"
fi
command -v bazel >/dev/null || die "bazel is not on PATH after installing bazel-bootstrap"

PY="${AOTI_BASE_PYTHON:-$(command -v python3.11 || command -v python3 || true)}"
[ -n "$PY" ] || die "no python3 found; install Python 3.11 (torch==$TORCH_VERSION CPU wheel is for 3.11)"
if [ ! -x "$VENV/bin/python" ]; then
  log "creating virtualenv $VENV"
  "$PY" -m venv "$VENV" || die "could not create virtualenv at $VENV (is python3-venv installed?)"
fi
have="$("$VENV/bin/python" -c 'import torch; print(torch.__version__)' 2>/dev/null || true)"
if [ "${have%%+*}" != "$TORCH_VERSION" ]; then
  log "installing torch==$TORCH_VERSION into $VENV (found: ${have:-none})"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "torch==$TORCH_VERSION" \
    || die "pip could not install torch==$TORCH_VERSION into $VENV"
fi
# Packaging numpy alongside torch silences its 'numpy not available' warnings.
"$VENV/bin/python" -c 'import numpy' 2>/dev/null \
  || "$VENV/bin/python" -m pip install -q --disable-pip-version-check numpy \
  || die "pip could not install numpy into $VENV"
# grpcio: the reducer's compile cache reads and writes a Remote Execution API server
# (--aoti_remote_cache, tools/remote_compile_cache.py) through it.
GRPCIO_VERSION="1.85.3"
have_grpc="$("$VENV/bin/python" -c 'import grpc; print(grpc.__version__)' 2>/dev/null || true)"
if [ "$have_grpc" != "$GRPCIO_VERSION" ]; then
  log "installing grpcio==$GRPCIO_VERSION into $VENV (found: ${have_grpc:-none})"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "grpcio==$GRPCIO_VERSION" \
    || die "pip could not install grpcio==$GRPCIO_VERSION into $VENV"
fi
have_tf="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("transformers"))' 2>/dev/null || true)"
if [ "$have_tf" != "$TRANSFORMERS_VERSION" ]; then
  log "installing transformers==$TRANSFORMERS_VERSION into $VENV (found: ${have_tf:-none})"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "transformers==$TRANSFORMERS_VERSION" "torch==$TORCH_VERSION" \
    || die "pip could not install transformers==$TRANSFORMERS_VERSION into $VENV"
fi
have_ao="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("torchao"))' 2>/dev/null || true)"
if [ "$have_ao" != "$TORCHAO_VERSION" ]; then
  log "installing torchao==$TORCHAO_VERSION into $VENV (found: ${have_ao:-none})"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "torchao==$TORCHAO_VERSION" "torch==$TORCH_VERSION" \
    || die "pip could not install torchao==$TORCHAO_VERSION into $VENV"
fi
log "ready: bazel $(dpkg-query -W -f='${Version}' bazel-bootstrap 2>/dev/null), torch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)'), transformers $TRANSFORMERS_VERSION, torchao $TORCHAO_VERSION in $VENV"

if [ "$WITH_CUDA" = 1 ]; then
  if [ ! -x "$CUDA_VENV/bin/python" ]; then
    log "creating virtualenv $CUDA_VENV (CUDA torch)"
    "$PY" -m venv "$CUDA_VENV" || die "could not create virtualenv at $CUDA_VENV"
  fi
  have_cuda="$("$CUDA_VENV/bin/python" -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>/dev/null || true)"
  have_cuda_version="${have_cuda%% *}"
  if [ "${have_cuda_version%%+*}" != "$CUDA_TORCH_VERSION" ] || [ "${have_cuda##* }" = None ]; then
    log "installing torch==$CUDA_TORCH_VERSION (CUDA build) into $CUDA_VENV (found: ${have_cuda:-none})"
    "$CUDA_VENV/bin/python" -m pip install -q --disable-pip-version-check "torch==$CUDA_TORCH_VERSION" numpy \
      || die "pip could not install torch==$CUDA_TORCH_VERSION into $CUDA_VENV"
  fi
  log "ready for --config=cuda: torch $("$CUDA_VENV/bin/python" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)') in $CUDA_VENV"
fi
