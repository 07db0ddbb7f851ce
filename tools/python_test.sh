#!/usr/bin/env bash
# python_test.sh PYTHON SCRIPT [ARGS...]: runs a Python test script with the harness's
# Python (@torch//:python), for sh_test targets.
set -euo pipefail
exec "$@"
