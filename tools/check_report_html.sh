#!/usr/bin/env bash
# check_report_html.sh REPORT.html OUT_DIR [PYTHON]: opens a reducer's report.html in headless
# Chromium, as a person's browser would, and checks that it renders with no errors:
#   - Chromium loads it and exits 0, and its log has no console error, no refused load
#     (the page's Content-Security-Policy refuses anything from outside) and no crash;
#   - the rendered page (--dump-dom) has the minimal graph's and the steps' pictures, and
#     the error plots when the report has them;
#   - the screenshot (OUT_DIR/screenshot.png, 1200 px wide) is a picture, not a blank
#     page: it has the culprit's fill where a culprit is marked, and many colours.
# Writes OUT_DIR/{screenshot.png,dom.html,chromium.log}. Exits non-zero, saying why.
set -euo pipefail
report="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
out="$2"
python="${3:-python3}"
mkdir -p "$out"
chromium="$(command -v chromium || command -v chromium-browser || true)"
[ -n "$chromium" ] || { echo "check_report_html: FAIL: Chromium is not installed (bash tools/setup.sh installs it)"; exit 1; }
profile="$(mktemp -d "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/chromium_profile.XXXXXX")"
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --disable-dev-shm-usage --hide-scrollbars
       --user-data-dir="$profile" --enable-logging=stderr --v=0 --window-size=1200,2600)
timeout 120 "$chromium" "${flags[@]}" --screenshot="$out/screenshot.png" "file://$report" >"$out/chromium.log" 2>&1 ||
  { echo "check_report_html: FAIL: Chromium exited $? taking the screenshot"; tail -20 "$out/chromium.log"; exit 1; }
timeout 120 "$chromium" "${flags[@]}" --dump-dom "file://$report" >"$out/dom.html" 2>>"$out/chromium.log" ||
  { echo "check_report_html: FAIL: Chromium exited $? dumping the page"; tail -20 "$out/chromium.log"; exit 1; }
# Console errors and refused loads, as Chromium logs them (its own start-up chatter aside).
if grep -E 'CONSOLE|Uncaught|Refused to|Content Security Policy|Aw, Snap|crashed' "$out/chromium.log"; then
  echo "check_report_html: FAIL: the page logged errors (above; all of it in $out/chromium.log)"
  exit 1
fi
"$python" - "$report" "$out/dom.html" "$out/screenshot.png" <<'PY'
import re, struct, sys, zlib

report, dom_path, png_path = sys.argv[1:]
source = open(report, encoding="utf-8").read()
dom = open(dom_path, encoding="utf-8").read()
problems = []
for what, needle in [("the minimal graph", 'id="minimal-graph"><svg'), ("the steps chart", 'class="steps"'),
                     ("the failure", 'id="failure"'), ("the environment", 'id="environment"')]:
    if needle not in dom:
        problems.append(f"the rendered page lacks {what} ({needle})")
plots = source.count('class="errplot"')
rendered = dom.count('class="errplot"')
if rendered != plots:
    problems.append(f"{plots} error plots in the report, {rendered} rendered")


def pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), f"unexpected PNG format (depth {depth}, colour {colour})"
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * channels, [], None
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i] if prev else 0
            c = prev[i - channels] if prev and i >= channels else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


width, height, channels, rows = pixels(png_path)
colours = set()
for row in rows[::4]:
    for x in range(0, width * channels, channels * 2):
        colours.add(row[x:x + 3])
if len(colours) < 20:
    problems.append(f"the screenshot has {len(colours)} colours: a blank or broken page")
if 'class="node culprit"' in source and b"\xff\xcd\xd2" not in colours:
    problems.append("the screenshot shows no culprit fill (#ffcdd2) though the report marks a culprit")
print(f"check_report_html: {width}x{height} screenshot, {len(colours)} colours, {plots} error plots, "
      f"{dom.count('<svg')} pictures rendered")
if problems:
    for p in problems:
        print("check_report_html: FAIL:", p)
    sys.exit(1)
PY
echo "check_report_html: ok ($out/screenshot.png)"
