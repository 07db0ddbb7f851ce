#!/usr/bin/env bash
# raw_tensor_format_test: the C++ (harness/archive/tensor_io.cc) and Python (tools/package_model.py)
# halves of the raw tensor format agree, in both directions, on every layout the harness
# stores: transposed, strided, broadcast (stride 0), bfloat16, bool, complex, empty, 0-dim.
# Usage: raw_tensor_format_test.sh PYTHON RAW_TENSOR_LAYOUTS PACKAGE_MODEL_PY
set -euo pipefail
python="$1" layouts="$2" package_model="$3"
work="${TEST_TMPDIR:-$(mktemp -d)}"
mkdir -p "$work/cpp" "$work/py"
"$layouts" write "$work/cpp"
"$python" - "$work" "$(dirname "$package_model")" <<'PY'
import json, os, sys, warnings
warnings.filterwarnings("ignore")
work, tools = sys.argv[1], sys.argv[2]
sys.path.insert(0, tools)
import torch
import package_model as pm

base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
# Keep in step with Layouts() in raw_tensor_layouts.cc.
LAYOUTS = [
    base,
    base.t(),
    base[:, 1:5:2],
    base[1].unsqueeze(0).expand(3, 6),
    base.reshape(4, 6, 1, 1).expand(4, 6, 2, 3),
    base.to(torch.bfloat16).t(),
    base > 10,
    torch.complex(base, -base).to(torch.complex64),
    base.to(torch.int64).flip(0),
    torch.empty(0, 3),
    torch.tensor(7.5, dtype=torch.float64),
    base[:1, ::2][:, :1],
]

def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and torch.equal(a, b)

# C++ wrote, Python reads.
manifest = json.load(open(os.path.join(work, "cpp", "manifest.json")))
assert len(manifest) == len(LAYOUTS), (len(manifest), len(LAYOUTS))
bad = 0
for i, (rec, want) in enumerate(zip(manifest, LAYOUTS)):
    got = pm.read_raw_tensor(rec, open(os.path.join(work, "cpp", rec["file"]), "rb").read())
    if not same(got, want):
        print(f"tensor {i}: read {got.dtype}{list(got.shape)} strides {got.stride()}, expected "
              f"{want.dtype}{list(want.shape)} strides {want.stride()} (or different values)")
        bad += 1
print(f"Python read {len(manifest)} tensors written by C++: {bad} differ")

# Python writes, C++ reads (below).
records = []
for i, t in enumerate(LAYOUTS):
    name = f"tensor_{i}.bin"
    records.append(pm.tensor_record(t, "", name))
    open(os.path.join(work, "py", name), "wb").write(pm.raw_bytes(t))
json.dump(records, open(os.path.join(work, "py", "manifest.json"), "w"))
sys.exit(1 if bad else 0)
PY
"$layouts" check "$work/py"
