#!/usr/bin/env bash
# report_html_render_test: the sample reduction's report.html opened in headless Chromium
# (tools/check_report_html.sh): it renders with no errors, with its graphs, plots and
# steps. The screenshot lands in the test's outputs (test.outputs/outputs.zip).
set -euo pipefail
sample="$1" checker="$2" python="$3"
out="${TEST_UNDECLARED_OUTPUTS_DIR:-${TEST_TMPDIR:-/tmp}}"
"$sample" "$TEST_TMPDIR/report.html" "$TEST_TMPDIR"
cp "$TEST_TMPDIR/report.html" "$out/report.html"
bash "$checker" "$TEST_TMPDIR/report.html" "$out/render" "$python"
