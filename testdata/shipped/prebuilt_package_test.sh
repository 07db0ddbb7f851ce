#!/usr/bin/env bash
# prebuilt_package_test: package_model.py --prebuilt (aoti_prebuilt_package) keeps the shipped
# compiled model byte for byte and records the shipped file's sha256; on bad or mismatched
# files each run gets an error that names the file and what was expected, and the build
# action fails (exit 2) instead of packaging something that is not what ships.
# Usage: prebuilt_package_test.sh PYTHON PACKAGE_MODEL TWO_MODELS.pt2 OTHER_PROGRAM.pt2
set -euo pipefail
python="$1" tool="$2" two="$3" other="$4"
work="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

expect_error() {  # expect_error DESCRIPTION TEXT... -- ARGS...: exit 2 and every TEXT in the message
  local what="$1"
  shift
  local texts=()
  while [ "$1" != "--" ]; do texts+=("$1"); shift; done
  shift
  set +e
  "$python" "$tool" --out "$work/out.pt2" "$@" >"$work/log" 2>&1
  local rc=$?
  set -e
  if [ "$rc" -ne 2 ]; then
    echo "FAIL: $what: exit $rc, expected 2"; tail -3 "$work/log"; failures=$((failures + 1)); return
  fi
  for t in "${texts[@]}"; do
    if ! grep -qF -- "$t" "$work/log"; then
      echo "FAIL: $what: the message lacks '$t':"; tail -3 "$work/log"; failures=$((failures + 1)); return
    fi
  done
  echo "ok: $what: $(grep -o 'ERROR: .*' "$work/log" | cut -c1-160)"
}

# Several models and none named: the models are listed.
expect_error "several models, none named" "holds several compiled models" "decoder" "encoder" "model_name" \
  -- --prebuilt "$two"
expect_error "a model it does not hold" "no compiled model 'classifier'" "['decoder', 'encoder']" \
  -- --prebuilt "$two" --name classifier
# A program that is not the one the model was compiled from.
expect_error "another model's program" "takes 2 inputs, and the exported program takes 3" \
  -- --prebuilt "$two" --name encoder --exported-program "$other"
# Inputs that do not exist, or hold something else.
expect_error "missing inputs file" "--inputs" "missing.pt" "does not exist" \
  -- --prebuilt "$two" --name encoder --inputs "$work/missing.pt"
"$python" -c "import torch, sys; torch.save('not tensors', sys.argv[1])" "$work/strings.pt"
expect_error "inputs of another kind" "holds a str" "a tuple of tensors" \
  -- --prebuilt "$two" --name encoder --inputs "$work/strings.pt"
echo "def not_inputs(): pass" >"$work/inputs.py"
expect_error "a Python inputs file without example_inputs()" "must define example_inputs()" \
  -- --prebuilt "$two" --name encoder --inputs "$work/inputs.py"
# Inputs the program refuses (a static batch of 4): the error names the inputs file.
"$python" -c "import torch, sys; torch.save((torch.ones(3, 8),), sys.argv[1])" "$work/three_rows.pt"
expect_error "inputs of another shape" "on the inputs" "three_rows.pt" "eager run raised" \
  -- --prebuilt "$two" --name decoder --inputs "$work/three_rows.pt"
# Not an archive at all; an archive with no compiled model; one with no program.
echo "not a zip" >"$work/not.pt2"
expect_error "not an archive" "not a .pt2 archive" -- --prebuilt "$work/not.pt2"
expect_error "a program archive without a compiled model" "holds no compiled model" -- --prebuilt "$other"
"$python" - "$two" "$work/aoti_only.pt2" <<'PY'
import sys, zipfile
src, dst = sys.argv[1:]
with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w") as w:
    for n in z.namelist():
        if "/models/" not in n and "/data/weights/" not in n and "/data/sample_inputs/" not in n:
            w.writestr(n.replace(n.split("/")[0], "aoti_only", 1), z.read(n))
PY
expect_error "a compiled model without its program" "holds no exported program for 'encoder'" "torch.export.save" \
  -- --prebuilt "$work/aoti_only.pt2" --name encoder
# The good case: the decoder with its own program and example inputs. Its compiled model is
# the shipped one, record for record and byte for byte, and the manifest names the file.
if "$python" "$tool" --prebuilt "$two" --name decoder --out "$work/decoder.pt2" >"$work/log" 2>&1; then
  "$python" - "$two" "$work/decoder.pt2" <<'PY' || failures=$((failures + 1))
import hashlib, json, sys, zipfile
shipped, package = sys.argv[1:]
def compiled(path):
    z = zipfile.ZipFile(path)
    return {n.split("/", 1)[1]: z.read(n) for n in z.namelist() if "/data/aotinductor/decoder/" in "/" + n.split("/", 1)[1]}
a, b = compiled(shipped), compiled(package)
assert a and a == b, f"the compiled model differs: {sorted(a)} vs {sorted(b)}"
z = zipfile.ZipFile(package)
m = json.loads(z.read(next(n for n in z.namelist() if n.endswith("extra/aoti_harness/package.json"))))
assert m["prebuilt"]["sha256"] == hashlib.sha256(open(shipped, "rb").read()).hexdigest(), m["prebuilt"]
assert m["model_name"] == "decoder" and m["compile"]["status"] == "ok", m
print(f"ok: the decoder's {len(a)} compiled records are the shipped ones, byte for byte; sha256 recorded")
PY
else
  echo "FAIL: the decoder did not package:"; tail -5 "$work/log"; failures=$((failures + 1))
fi
# Inputs from a Python file with example_inputs(), and from a torch.save'd (args, kwargs) pair:
# the package records them (other values than the program's own) and where they came from.
cat >"$work/decoder_inputs.py" <<'PY'
import torch

def example_inputs():
    return (torch.full((4, 8), 0.5),)
PY
"$python" -c "import torch, sys; torch.save(((torch.full((4, 8), 2.0),), {}), sys.argv[1])" "$work/decoder_inputs.pt"
for inputs in "$work/decoder_inputs.py" "$work/decoder_inputs.pt"; do
  if "$python" "$tool" --prebuilt "$two" --name decoder --inputs "$inputs" --out "$work/decoder_in.pt2" >"$work/log" 2>&1; then
    "$python" - "$work/decoder_in.pt2" "$inputs" <<'PY' || failures=$((failures + 1))
import json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
m = json.loads(z.read(next(n for n in z.namelist() if n.endswith("extra/aoti_harness/package.json"))))
assert m["inputs"][0]["sizes"] == [4, 8], m["inputs"]
assert m["prebuilt"]["inputs"] == sys.argv[2], m["prebuilt"]
print(f"ok: inputs from {sys.argv[2].rsplit('/', 1)[-1]}: {m['inputs'][0]['sizes']}, recorded as their source")
PY
  else
    echo "FAIL: the decoder did not package with --inputs $inputs:"; tail -3 "$work/log"; failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ] && echo "prebuilt_package_test: all passed"
exit "$failures"
