#!/usr/bin/env bash
# run_tests.sh: set up (first use only) and run the whole test suite: `bazel test //...`.
# Extra arguments go to `bazel test` (for example a target pattern or --test_filter=...).
source "$(dirname "${BASH_SOURCE[0]}")/bazel_env.sh"
cd "$AOTI_ROOT"
targets=("$@")
((${#targets[@]})) || targets=(//...)
bazel_cmd test "${targets[@]}"
