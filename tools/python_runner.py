"""python_runner: the compiled model of a harness package run in a Python process, for a
model that calls operators written only in Python (a custom_op with no C++ kernel, such as
transformers' grouped_mm_fallback): AOTI's compiled model calls those back into Python,
which the C++ runner (harness/runner/aoti_runner.cc) cannot do. The same protocol as that
runner, so the check reads its result the same way:

  python_runner.py --package P --model NAME --inputs DIR --outputs DIR [--import MODULE]...
                   [--op_library SO]... [--seed N]

Inputs and outputs are tensor bundles (harness/archive/tensor_bundle.h: manifest.json and
one raw file per tensor); DIR/result.json says {"status": "ok" | "load_error" |
"runtime_error" | "harness_error", "message": ...}. Each --import (a module's name, or a .py
file) is imported first: what defines the operators, as the team's own Python serving code
imports it; one that cannot be imported is a harness error naming it.
"""

import argparse
import importlib
import importlib.util
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def read_bundle(d):
    from aoti_package.tensors import read_raw_tensor

    with open(os.path.join(d, "manifest.json")) as f:
        records = json.load(f)
    out = []
    for rec in records:
        with open(os.path.join(d, rec["file"]), "rb") as f:
            out.append(read_raw_tensor(rec, f.read()))
    return out


def write_bundle(d, tensors):
    from aoti_package.tensors import raw_bytes, tensor_record

    records = []
    for i, t in enumerate(tensors):
        name = f"tensor_{i}.bin"
        with open(os.path.join(d, name), "wb") as f:
            f.write(raw_bytes(t))
        records.append(tensor_record(t, "", name))
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(records, f)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--package", required=True)
    p.add_argument("--model", default="model")
    p.add_argument("--inputs", required=True)
    p.add_argument("--outputs", required=True)
    p.add_argument("--import", dest="imports", action="append", default=[])
    p.add_argument("--op_library", action="append", default=[])
    p.add_argument("--seed", type=int, default=-1)
    args = p.parse_args(argv)

    def finish(status, message=""):
        with open(os.path.join(args.outputs, "result.json"), "w") as f:
            json.dump({"status": status, "message": message}, f)
        return 0 if status == "ok" else 2

    try:
        import torch
    except Exception as e:
        return finish("harness_error", f"cannot import torch: {type(e).__name__}: {e}")
    for module in args.imports:
        try:
            if module.endswith(".py"):  # a file: imported under its own name, from where it lies
                spec = importlib.util.spec_from_file_location(os.path.basename(module)[:-3], module)
                loaded = importlib.util.module_from_spec(spec)
                sys.modules[spec.name] = loaded
                spec.loader.exec_module(loaded)
            else:
                importlib.import_module(module)
        except Exception as e:
            return finish("harness_error", f"--import {module}: cannot be imported ({type(e).__name__}: {e}); the "
                                           "compiled model calls operators this module defines in Python")
    for lib in args.op_library:
        try:
            torch.ops.load_library(lib)
        except Exception as e:
            return finish("harness_error", f"op library {lib}: cannot be loaded: {type(e).__name__}: {e}")
    try:
        inputs = read_bundle(args.inputs)
    except Exception as e:
        return finish("harness_error", f"{args.inputs}: cannot read the inputs: {type(e).__name__}: {e}")
    try:
        from torch._inductor.package.package import load_package

        compiled = load_package(args.package, model_name=args.model)
    except Exception as e:
        return finish("load_error", f"{type(e).__name__}: {e}")
    try:
        if args.seed >= 0:
            torch.manual_seed(args.seed)
        with torch.no_grad():
            outputs = compiled.loader.run(inputs)
    except Exception as e:
        return finish("runtime_error", f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}")
    try:
        write_bundle(args.outputs, list(outputs))
    except Exception as e:
        return finish("harness_error", f"{args.outputs}: cannot write the outputs: {type(e).__name__}: {e}")
    return finish("ok")


if __name__ == "__main__":
    sys.exit(main())
