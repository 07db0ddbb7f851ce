"""Operators written only in Python: what a program calls that no C++ process can run.

A custom operator defined in Python (torch.library.custom_op, a torch.library.Library
whose schema and kernels a .py file registers: transformers' grouped_mm_fallback) has no C++
kernel. AOTI compiles a call to it as a call back into Python (the proxy executor), so the
compiled model runs only in a Python process that imported the module defining it; the
harness's C++ runner, its eager interpreter and a C++ deployment cannot run it. The packager
records each one in the manifest (`python_ops`), so the test can say so before anything runs.
"""

import os
import re

from .model_file import MODEL_MODULE

# Namespaces PyTorch defines in Python that the harness runs natively (the interpreter's
# quantize/dequantize, harness/program/quantized_ops.cc) and that inductor lowers into its own
# kernels, so a compiled model never calls back into Python for them.
RUN_NATIVELY = ("quantized_decomposed",)

_SCHEMA_FILE = re.compile(r"^\s*(?:schema|debug): registered at (\S+?):(\d+)", re.MULTILINE)


def _defined_in_python(qualname):
    """(file, line) of the .py file that registered the operator's schema, or None when a C++
    library did (or the dispatcher does not know it)."""
    import torch

    try:
        dump = torch._C._dispatch_dump(qualname)
    except Exception:
        return None
    found = _SCHEMA_FILE.search(dump)
    if not found or not found.group(1).endswith(".py"):
        return None
    return found.group(1), int(found.group(2))


def _defining_function(qualname):
    """(module, "file:line") of the Python function a custom_op was made from, or ("", "")
    where the operator is no custom_op (a torch.library.Library's)."""
    try:
        import inspect

        from torch._library.custom_ops import OPDEFS

        fn = getattr(OPDEFS.get(qualname), "_init_fn", None)
        if fn is None:
            return "", ""
        module = getattr(fn, "__module__", "") or ""
        path = inspect.getsourcefile(fn) or ""
        if path.startswith(os.getcwd() + os.sep):  # a file of the build's own tree: as the repository names it
            path = os.path.relpath(path)
        # The model file itself is imported under a name of the packager's (MODEL_MODULE): its path says more.
        return ("" if module == MODEL_MODULE else module), f"{path}:{inspect.getsourcelines(fn)[1]}"
    except Exception:
        return "", ""


def _graph_modules(gm):
    """gm and the subgraphs of its higher-order ops, nested."""
    import torch.fx

    yield gm
    for _, sub in gm.named_children():
        if isinstance(sub, torch.fx.GraphModule):
            yield from _graph_modules(sub)


def _compiled_calls(aoti_pt2):
    """The operators the compiled model calls through AOTI's proxy executor (the extern
    kernel nodes its wrapper's .json lists), or None where there is no compiled model."""
    if not aoti_pt2:
        return None
    import json
    import zipfile

    calls = set()
    with zipfile.ZipFile(aoti_pt2) as z:
        for name in z.namelist():
            if "/data/aotinductor/" in name and name.endswith(".json") and not name.endswith("_metadata.json"):
                try:
                    nodes = json.loads(z.read(name)).get("nodes", [])
                except (ValueError, AttributeError):
                    continue
                for n in nodes:
                    target = (n.get("node") or {}).get("target")
                    if isinstance(target, str):
                        calls.add(target.split(".")[0])
    return calls


def python_only_ops(ep, aoti_pt2=None):
    """The operators the exported program calls (inside subgraphs too) whose schema a Python
    file registered, each once: {"op": "ns::name.overload", "defined_at": "file:line" (the
    custom_op's function, else the file that registered the schema), "module": the defining
    function's module ("" where unknown), "nodes": how many nodes call it,
    "compiled_calls": whether the compiled model calls it back (absent with no compiled
    model)}. Sorted by op."""
    import torch

    counts = {}
    for gm in _graph_modules(ep.graph_module):
        for node in gm.graph.nodes:
            if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
                counts[node.target] = counts.get(node.target, 0) + 1
    calls = _compiled_calls(aoti_pt2)
    out = []
    for op, n in counts.items():
        qualname = op._schema.name  # "ns::name"
        if qualname.split("::")[0] in RUN_NATIVELY or qualname.startswith(("aten::", "prims::")):
            continue
        where = _defined_in_python(qualname)
        if where is None:
            continue
        module, function_at = _defining_function(qualname)
        rec = {"op": qualname + ("." + op._overloadname if op._overloadname else ""),
               "defined_at": function_at or f"{where[0]}:{where[1]}", "module": module, "nodes": n}
        if calls is not None:
            rec["compiled_calls"] = qualname in calls
        out.append(rec)
    return sorted(out, key=lambda r: r["op"])
