#!/usr/bin/env bash
# python_test.sh PROGRAM [ARGS...]: runs its arguments, for sh_test targets: a Python test
# script with the harness's Python (@torch//:python), or a test binary with a filter
# (//reducer:reducer_pool_test).
set -euo pipefail
exec "$@"
