#!/usr/bin/env bash
# py_lint.sh [FILE_OR_DIR...]: pyflakes (from the package index, pinned) on the project's
# own Python: the packager (tools/package_model.py, tools/aoti_package/), the tools, the
# repro.py template, the CI collector, the fuzz generator, the benchmarks. Model files
# (testdata/) are the users' kind of file and are left as written. Installs pyflakes on
# first use into ~/.cache/aoti_harness/py-lint; exits non-zero naming each finding.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYFLAKES_VERSION=3.4.0
LINT="${AOTI_PY_LINT:-${XDG_CACHE_HOME:-$HOME/.cache}/aoti_harness/py-lint}"
source tools/pip_tool.sh
pip_tool py_lint "$LINT/venv" pyflakes "$PYFLAKES_VERSION"
if (($# == 0)); then
  set -- tools/*.py tools/aoti_package reducer/repro examples/ci harness/check/same_cases.py testdata/fuzz/*.py bench/*.py
fi
# A control first: pyflakes must find an unused import, or it checks nothing.
control="$(mktemp -d)"
trap 'rm -rf "$control"' EXIT
printf 'import os\n' >"$control/unused.py"
if "$LINT/venv/bin/pyflakes" "$control/unused.py" >/dev/null 2>&1; then
  echo "py_lint: pyflakes passed a file with an unused import: it checks nothing" >&2
  exit 1
fi
if ! "$LINT/venv/bin/pyflakes" "$@"; then
  echo "py_lint: FAILED (pyflakes $PYFLAKES_VERSION on: $*)" >&2
  exit 1
fi
echo "py_lint: ok (pyflakes $PYFLAKES_VERSION, $(find "$@" -name '*.py' | wc -l) files)"
