#!/usr/bin/env bash
# package_manifest_format_test: the C++ (harness/archive/package_manifest.cc) and Python
# (tools/package_model.py) writers and readers of package.json agree: each side reads
# what the other wrote, field for field, and both refuse the same broken manifests.
# Usage: package_manifest_format_test.sh PYTHON PROBE PACKAGE_MODEL_PY
set -euo pipefail
python="$1" probe="$2" package_model="$3"
work="${TEST_TMPDIR:-$(mktemp -d)}"
"$probe" write "$work/cpp.json"
"$python" - "$work" "$(dirname "$package_model")" "$probe" <<'PY'
import json, os, subprocess, sys, warnings
warnings.filterwarnings("ignore")
work, tools, probe = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, tools)
import package_model as pm

failures = []
def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)

def cpp_reads(path):
    r = subprocess.run([probe, "read", path], capture_output=True, text=True)
    return r.returncode, (json.loads(r.stdout) if r.returncode == 0 else r.stderr.strip())

# C++ wrote, Python reads: every field, with its value.
cpp_text = open(os.path.join(work, "cpp.json")).read()
m = pm.read_manifest(cpp_text, "cpp.json")
expect(m["seed"] == 7 and m["export"] == {"strict": True, "dynamic_shapes": True, "from_program": True},
       "Python reads the seed and the export record C++ wrote")
expect(m["compile"]["error"]["message"] == "C++ compile error \u2018compile\u2019",
       "Python reads the compile error, UTF-8 included")
expect(m["inputs"][1]["strides"] == [0, 1] and m["eager_outputs"][0]["sizes"] == [],
       "Python reads the tensor records (a broadcast stride, a 0-dim output)")
expect(m["inductor_configs"] == {"cpp.inject_relu_bug_TESTING_ONLY": "compile_error", "max_autotune": False},
       "Python reads the inductor configs")
expect(m["reduced_from"] == "/cases/original.pt2", "Python reads reduced_from")
expect(m["inputs"][0]["device"] == "cuda:0" and m["inputs"][1]["device"] == "cpu",
       "Python reads each input's device (a CUDA input among CPU ones)")
expect(m["cuda_version"] == "13.0", "Python reads the package's CUDA version")
expect(m["shape_inputs"]["min"][0]["sizes"] == [1, 6], "Python reads the model file's inputs per shape point")
expect(m["python_ops"][0] == {"op": "transformers::grouped_mm_fallback.default", "defined_at": "moe.py:12",
                              "module": "transformers.integrations.moe", "nodes": 2, "compiled_calls": True}
       and "compiled_calls" not in m["python_ops"][1],
       "Python reads the operators written only in Python (with and without a compiled model)")

# Python writes what it read back (as the compile server does with a candidate's), C++ reads it.
py_path = os.path.join(work, "py.json")
open(py_path, "wb").write(pm.manifest_bytes(m))
rc, back = cpp_reads(py_path)
expect(rc == 0 and back == json.loads(cpp_text), "C++ reads Python's rewrite as the manifest it wrote")

# A manifest Python makes from scratch (as package_model does), C++ reads field for field.
rec = pm.tensor_record(__import__("torch").zeros(2, 3).t(), "x", "tensors/input_0.bin")
fresh = pm.package_manifest("model", {"status": "ok", "seconds": 1.5}, [rec], model_file="m.py", seed=3,
                            inductor_configs={"a.b": 1}, dynamic_shapes=True, eager_outputs=[rec],
                            shape_inputs={"max": [rec], "long_ids": [rec]},
                            python_ops=[{"op": "ns::f.default", "defined_at": "m.py:3", "module": "m", "nodes": 1,
                                         "compiled_calls": False}])
fresh_path = os.path.join(work, "fresh.json")
open(fresh_path, "wb").write(pm.manifest_bytes(fresh))
rc, back = cpp_reads(fresh_path)
expect(rc == 0 and back == fresh, "C++ reads a manifest Python made, field for field")

# Both refuse the same broken manifests.
for name, broken in [("no compile record", {k: v for k, v in fresh.items() if k != "compile"}),
                     ("no inputs", {k: v for k, v in fresh.items() if k != "inputs"}),
                     ("another format", dict(fresh, format="aoti_harness.package/0")),
                     ("a record without sizes", dict(fresh, inputs=[{k: v for k, v in rec.items() if k != "sizes"}])),
                     ("a record whose dtype is a number", dict(fresh, inputs=[dict(rec, dtype=6)])),
                     ("a record on no real device", dict(fresh, inputs=[dict(rec, device="gpu0")])),
                     ("a shape point's record without a file",
                      dict(fresh, shape_inputs={"min": [{k: v for k, v in rec.items() if k != "file"}]})),
                     ("a Python operator without a node count", dict(fresh, python_ops=[{"op": "ns::f"}]))]:
    path = os.path.join(work, "broken.json")
    open(path, "w").write(json.dumps(broken))
    rc, _ = cpp_reads(path)
    try:
        pm.read_manifest(json.dumps(broken), "broken.json")
        py_refused = False
    except pm.ContractError:
        py_refused = True
    expect(rc != 0 and py_refused, f"both refuse a manifest with {name}")

# The compile server places each candidate input on its recorded device; a device this
# process cannot use is refused by name (here: a CPU-only torch).
import torch
t = torch.zeros(2)
expect(pm.on_recorded_device(t, {"name": "x", "device": "cpu"}, "cand.pt2: input") is t,
       "a CPU input stays where it is")
if not torch.cuda.is_available():
    try:
        pm.on_recorded_device(t, {"name": "x", "device": "cuda:0"}, "cand.pt2: input")
        refused = ""
    except pm.ContractError as e:
        refused = str(e)
    expect("cand.pt2: input 'x' was recorded on: 'cuda:0'" in refused and "cannot use CUDA" in refused,
           f"an input recorded on cuda:0 is refused by name on a host without CUDA ({refused!r})")
for bad in ("gpu0", "cuda:x", ""):
    try:
        pm.check_device(bad, "--device")
        ok = False
    except pm.ContractError as e:
        ok = "--device" in str(e)
    expect(ok, f"--device {bad!r} is refused by name")

# Both accept a manifest with only the required fields (the rest have defaults).
minimal = {k: fresh[k] for k in ("format", "model_name", "compile", "inputs", "eager_outputs")}
path = os.path.join(work, "minimal.json")
open(path, "w").write(json.dumps(minimal))
rc, back = cpp_reads(path)
pm.read_manifest(json.dumps(minimal), "minimal.json")
expect(rc == 0 and back["seed"] == 0 and back["inductor_configs"] == {}, "both accept the required fields alone")

sys.exit(1 if failures else 0)
PY
