#!/usr/bin/env python3
"""standalone.py REPRO_DIR [--out FILE] [--verify] [--issue]: writes repro_standalone.py, the repro a PyTorch
maintainer runs: one file that needs only torch and the standard library.

REPRO_DIR is a repro the reducer wrote (repro.py, repro.pt2, aoti_aten_fallbacks.py). The
file written holds the reduced program as Python source (an nn.Module whose forward is the
exported graph's code; each higher-order operator's subgraph a module of its own, called
as the graph calls it), its weights and inputs (a tensor of up to INLINE_LIMIT elements
written out exactly, a larger one in `<stem>_tensors.pt` beside the file, which the file
names), the test's inductor configs, its runner's seed, environment and deadline, and the
test's rule for the failure: export, aoti_compile_and_package, aoti_load_package and the
compiled run in a child (a crash ends the child, not the check), judged as the test judged
it. It prints what happened and exits 1 when the failure reproduces, 0 when the program
passes, 2 when it fails otherwise, 3 when it cannot run here.

--issue also writes upstream_issue.md beside it, the issue as PyTorch's bug template asks
for it: a title naming the op, the class and the stage the stage ladder found, the script
inline, what was expected and what happened (confirmed by --verify's record where there is
one), the verified workaround and torch's regression range from the repro's summary.json,
and `python -m torch.utils.collect_env`'s report cut to what a CPU compile bug needs.

Where the case cannot be written that way (an operator argument the emitter cannot spell,
an effect token, a script object, a custom op library's operator, the harness's own
inductor keys, which only repro.py applies) the file says so at its top and exits 3 naming why: never a file that silently
checks something else.
"""

import argparse
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

INLINE_LIMIT = 64
# Names the graph's code may use beyond the operators: the preamble of every file binds them.
KNOWN_GLOBALS = {"torch", "device", "inf", "nan", "NoneType", "pytree", "fx_pytree", "operator", "math",
                 "builtins", "getattr"}


class CannotWrite(Exception):
    """The case has something the emitter cannot write as source; the message says what."""


def load_repro(repro_dir):
    """repro.py of REPRO_DIR as a module: its case (FAILURE_CLASS, CHECK_STR, INDUCTOR_CONFIGS,
    OPTIONS, DEVICE) and its loader of repro.pt2."""
    path = os.path.join(repro_dir, "repro.py")
    if not os.path.isfile(path):
        raise SystemExit(f"standalone.py: {repro_dir} holds no repro.py (expected a repro directory the reducer wrote)")
    sys.path.insert(0, repro_dir)
    spec = importlib.util.spec_from_file_location("aoti_repro_case", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- values -------------------------------------------------------------------------

class Tensors:
    """Tensors written into the file: a small one exactly; a large one exactly in the file
    beside it, or (`seeded`) drawn from a seed with its dtype, shape and value range, where
    its values do not matter to the failure (--verify finds out)."""

    def __init__(self, beside_name, seeded=False):
        self.beside_name = beside_name
        self.seeded = seeded
        self.beside = {}
        self.drawn = []

    def expr(self, name, t):
        import torch

        if not isinstance(t, torch.Tensor):
            return literal(t, name)
        if t.is_quantized or t.is_sparse or t.layout != torch.strided:
            raise CannotWrite(f"{name} is a {t.layout} {'quantized ' if t.is_quantized else ''}tensor")
        t = t.detach()
        dtype = str(t.dtype)
        shape = list(t.shape)
        if t.numel() <= INLINE_LIMIT and not t.is_complex():
            values = t.cpu().reshape(-1)
            if t.is_floating_point():
                values = values.to(torch.float64)  # exact for every float dtype; written back exactly
            body = ", ".join(literal(v.item(), name) for v in values)
            return f"torch.tensor([{body}], dtype={dtype}).reshape({shape})"
        if self.seeded and not t.is_complex():
            self.drawn.append(name)
            seed = len(self.drawn)
            c = t.cpu()
            if t.dtype == torch.bool:
                return f"drawn({seed}, {shape}, {dtype}, {round(c.float().mean().item(), 3)})"
            if not t.is_floating_point():
                return f"drawn({seed}, {shape}, {dtype}, low={int(c.min())}, high={int(c.max())})"
            c64 = c.to(torch.float64)
            finite = c64[c64.isfinite()]
            mean = float(f"{finite.mean().item():.3g}") if finite.numel() else 0.0
            std = float(f"{finite.std().item():.3g}") if finite.numel() > 1 else 0.0
            return f"drawn({seed}, {shape}, {dtype}, {mean!r}, {std!r})"
        self.beside[name] = t.cpu().contiguous().clone()
        return f"BESIDE[{name!r}]"


DRAWN = '''

def drawn(seed, shape, dtype, mean=0.0, std=1.0, low=0, high=1):  # values that do not matter, from a seed
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) < mean
    if not dtype.is_floating_point:
        return torch.randint(low, high + 1, shape, generator=g, dtype=dtype)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * std + mean).to(dtype)
'''


def literal(v, what):
    """Python source for a scalar or a small structure, exactly."""
    if v is None or isinstance(v, (bool, str)):
        return repr(v)
    if isinstance(v, int):
        return repr(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)  # repr round-trips a double exactly
    if isinstance(v, (list, tuple)):
        inner = ", ".join(literal(x, what) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
    raise CannotWrite(f"{what} is a {type(v).__name__}, which the emitter does not write")


# --- the program --------------------------------------------------------------------

def graph_code(gm, name, what):
    """The code of a graph module's forward renamed `name`, indented as a method."""
    pc = gm.graph.python_code(root_module="self")
    unknown = sorted(set(pc.globals) - KNOWN_GLOBALS)
    if unknown:
        raise CannotWrite(f"{what}'s code uses {unknown}, which the emitter cannot import with torch alone")
    code = pc.src.strip()
    code = re.sub(r"^def forward\(", f"def {name}(", code, count=1)
    return "\n".join(("    " + line) if line.strip() else "" for line in code.splitlines())


def subgraph_classes(gm, prefix, classes):
    """A class per graph-module child (the higher-order operators' subgraphs), nested ones
    first; returns [(attribute, class name)] of `gm`'s own children."""
    import torch

    own = []
    for attr, child in gm.named_children():
        if not isinstance(child, torch.fx.GraphModule):
            raise CannotWrite(f"{prefix}{attr} is a {type(child).__name__}, not a graph")
        cls = "Sub_" + re.sub(r"\W", "_", prefix + attr)
        children = subgraph_classes(child, prefix + attr + "_", classes)
        init = "".join(f"        self.{a} = {c}()\n" for a, c in children)
        ctor = f"    def __init__(self):\n        super().__init__()\n{init}\n" if children else ""
        classes.append(f"class {cls}(torch.nn.Module):\n{ctor}{graph_code(child, 'forward', prefix + attr)}\n")
        own.append((attr, cls))
    return own


TORCH_NAMESPACES = {"aten", "prims", "higher_order", "quantized_decomposed", "quantized", "_quantized"}


def library_operators(gm):
    """The operators of `gm` (its subgraphs too) that are not torch's own: a custom op
    library's, which only that library defines."""
    import torch

    found = set()
    for node in gm.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
            if node.target.namespace not in TORCH_NAMESPACES:
                found.add(str(node.target))
    for child in gm.children():
        if isinstance(child, torch.fx.GraphModule):
            found |= library_operators(child)
    return found


def uses_namespace(gm, namespace):
    import torch

    return any(n.op == "call_function" and getattr(n.target, "namespace", None) == namespace for n in gm.graph.nodes) or any(
        uses_namespace(c, namespace) for c in gm.children() if isinstance(c, torch.fx.GraphModule))


def emit_program(ep, tensors):
    """(the classes and the Repro module's source, the dynamic dimensions of its inputs,
    the names of its inputs)."""
    from torch.export.graph_signature import InputKind

    sig = ep.graph_signature
    state = dict(ep.state_dict)
    state.update(ep.constants)
    placeholders = [n for n in ep.graph_module.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(sig.input_specs):
        raise CannotWrite("the program's placeholders and its signature disagree")
    attrs, forward_args, user, used = [], [], [], set()
    for node, spec in zip(placeholders, sig.input_specs):
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            attr = re.sub(r"\W", "_", spec.target)
            while attr in used:
                attr += "_"
            used.add(attr)
            value = state[spec.target]
            src = tensors.expr(spec.target, value)
            if spec.kind == InputKind.PARAMETER:
                line = f"self.{attr} = torch.nn.Parameter({src}, requires_grad={bool(value.requires_grad)})"
            elif spec.kind == InputKind.BUFFER:
                line = f"self.register_buffer({attr!r}, {src}, persistent={bool(spec.persistent)})"
            else:
                line = f"self.{attr} = {src}"
            attrs.append(line)
            forward_args.append(f"self.{attr}")
        elif spec.kind == InputKind.USER_INPUT:
            user.append(node.name)
            forward_args.append(node.name)
        else:
            raise CannotWrite(f"input {node.name} is a {spec.kind.name} (an effect token or a script object)")
    classes = []
    children = subgraph_classes(ep.graph_module, "", classes)
    init = [f"        self.{a} = {c}()" for a, c in children] + [f"        {line}" for line in attrs]
    ctor = "    def __init__(self):\n        super().__init__()\n" + "\n".join(init) + "\n\n" if init else ""
    root = graph_code(ep.graph_module, "graph", "the program")
    repro = (f"class Repro(torch.nn.Module):\n{ctor}"
             f"    def forward(self, {', '.join(user)}):\n        return self.graph({', '.join(forward_args)})\n\n{root}\n")
    dynamic = []
    for node in placeholders:
        if node.name not in user:
            continue
        val = node.meta.get("val")
        dims = {i: "DYN" for i, d in enumerate(getattr(val, "shape", ())) if not isinstance(d, int)}
        dynamic.append(dims or None)
    return "\n\n".join(classes + [repro]), dynamic, user


def emit_inputs(ep, user, tensors):
    """The flat user inputs, in the graph's order, as source."""
    from torch.utils import _pytree as pytree

    args, kwargs = ep.example_inputs
    leaves = pytree.tree_leaves((args, kwargs))
    if len(leaves) != len(user):
        raise CannotWrite(f"the program takes {len(user)} inputs, its sample inputs flatten to {len(leaves)}")
    return [tensors.expr(f"input {name}", v) for name, v in zip(user, leaves)]


# --- the check ----------------------------------------------------------------------

JUDGES = {
    "fp64": ("fp64 = model64(*[x.to(DEVICE).double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in INPUTS])\n"
             "    # An output the program itself casts down (.float() after an autocast region) is still\n"
             "    # the float64 run's: the reference, rounded to the output's dtype.\n"
             "    fp64 = [f.double() if isinstance(f, torch.Tensor) and f.is_floating_point() and f.dtype != torch.float64\n"
             "            and isinstance(g, torch.Tensor) and f.dtype == g.dtype else f for f, g in zip(leaves(fp64), leaves(c))]\n"
             "    return same(leaves(e), leaves(c), fp64, tol=TOL, equal_nan=True, ignore_non_fp=IGNORE_NON_FP)",
             "from torch._dynamo.utils import same"),
    "strict": ("return all(torch.allclose(a, b, rtol=TOL, atol=TOL, equal_nan=True) for a, b in zip(leaves(e), leaves(c)))", ""),
    "assert_close": ("try:\n        torch.testing.assert_close(c, e, rtol=RTOL, atol=ATOL, equal_nan=True)\n        return True\n"
                     "    except AssertionError:\n        return False", ""),
    "sqnr": ("def db(got, ref):\n        got, ref = got.double(), ref.double()\n        noise = (got - ref).pow(2).sum()\n"
             "        return math.inf if noise == 0 else 10 * math.log10(ref.pow(2).sum() / noise)\n"
             "    return all(db(a, b) >= MIN_SQNR_DB for a, b in zip(leaves(c), leaves(e)) if a.is_floating_point())", ""),
}


def header(title_lines):
    return "".join(f"# {line}\n" if line else "#\n" for line in title_lines)


def cannot_write_file(repro, why):
    return (header([
        "Standalone AOTI repro: NOT WRITTEN (aoti_harness).",
        f"This case cannot be written as a torch-only script: {why}.",
        "Run repro.py beside this file instead (it needs repro.pt2).",
    ]) + f"import sys\n\nprint({('repro_standalone.py: this case cannot be written as a torch-only script: ' + why)!r})\nsys.exit(3)\n")


def write_standalone(repro, out_path, seeded=False):
    """Writes out_path (and the tensors file beside it where needed); returns
    (written as source: bool, why not, the tensors drawn from a seed)."""
    stem = os.path.splitext(os.path.basename(out_path))[0]
    beside_name = stem + "_tensors.pt"
    beside_path = os.path.join(os.path.dirname(os.path.abspath(out_path)), beside_name)
    try:
        text, tensors = emit(repro, beside_name, seeded)
    except CannotWrite as e:
        with open(out_path, "w") as f:
            f.write(cannot_write_file(repro, str(e)))
        return False, str(e), []
    import torch

    if tensors.beside:
        torch.save(tensors.beside, beside_path)
    elif os.path.exists(beside_path):
        os.remove(beside_path)
    with open(out_path, "w") as f:
        f.write(text)
    return True, "", tensors.drawn


def emit(repro, beside_name, seeded=False):
    import torch  # noqa: F401  (the repro module imported it; the emitter needs it too)

    options, accuracy = repro.OPTIONS, repro.OPTIONS["accuracy"]
    runner = options.get("runner", {})
    configs = {k: repro_parse(repro, v) for k, v in repro.INDUCTOR_CONFIGS.items()}
    harness_keys = sorted(k for k in configs if k.startswith("aoti_harness."))
    if harness_keys:
        raise CannotWrite(f"its inductor configs hold the harness's own keys {harness_keys}, which only repro.py applies")
    mode = accuracy.get("mode", "fp64")
    if repro.FAILURE_CLASS == "accuracy" and mode not in JUDGES:
        raise CannotWrite(f"the test's accuracy mode {mode!r} has no torch-only rule here")
    if runner.get("op_libraries"):
        repro.load_libraries()  # the program may name their operators: it loads only with them
    ep = repro.load_program()
    if runner.get("op_libraries"):
        # A test's libraries are loaded for every program of its repository; the repro needs
        # them only when its own graph calls one of their operators.
        foreign = sorted(library_operators(ep.graph_module))
        if foreign:
            raise CannotWrite(f"it calls {foreign}, operators of the libraries {runner['op_libraries']}")
    tensors = Tensors(beside_name, seeded)
    program, dynamic, user = emit_program(ep, tensors)
    inputs = emit_inputs(ep, user, tensors)
    judge, judge_import = JUDGES.get(mode, JUDGES["fp64"])
    dyn_src = "None"
    if any(d is not None for d in dynamic):
        dyn_src = "(" + "".join(
            ("None" if d is None else "{" + ", ".join(f"{i}: Dim.DYNAMIC" for i in d) + "}") + ", " for d in dynamic) + ")"
    seed = runner.get("seed")
    env = dict(kv.split("=", 1) for kv in runner.get("env", []))
    timeout = runner.get("timeout_s")
    nodes = sum(1 for n in ep.graph_module.graph.nodes if n.op == "call_function")
    lines = [
        f"Standalone AOTI repro, written by aoti_harness: {repro.FAILURE_CLASS}"
        + (f" ({repro.CHECK_STR})" if repro.CHECK_STR else "") + f", {nodes} node(s), torch {torch.__version__}.",
        "Needs only torch: python repro_standalone.py  (exit 1: the failure reproduces; 0: it passes;",
        "2: it fails otherwise; 3: it cannot run here).",
    ]
    if tensors.beside:
        lines.append(f"Reads {beside_name} beside it: {', '.join(sorted(tensors.beside))}.")
    if tensors.drawn:
        lines.append(f"Drawn from a seed (their values do not matter to the failure): {', '.join(tensors.drawn)}.")
    pre = [
        "import atexit, math, os, shutil, signal, subprocess, sys, tempfile",
        "import torch",
        "from torch import device",
        "from torch.export import Dim",
        "from torch.utils._pytree import tree_leaves as leaves",
    ]
    if judge_import:
        pre.append(judge_import)
    if uses_namespace(ep.graph_module, "quantized_decomposed"):
        pre.append("import torch.ao.quantization.fx._decomposed  # defines the quantized_decomposed operators")
    pre.append('inf, nan, NoneType = float("inf"), float("nan"), type(None)')
    if tensors.beside:
        pre.append(f"BESIDE = torch.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), {beside_name!r}), weights_only=True)")
    const = [
        f"FAILURE, CHECK = {repro.FAILURE_CLASS!r}, {repro.CHECK_STR!r}",
        f"CONFIGS = {configs!r}",
        f"DEVICE, SEED, ENV, TIMEOUT = {repro.DEVICE!r}, {seed!r}, {env!r}, {timeout!r}",
        {"fp64": f"TOL, IGNORE_NON_FP = {accuracy.get('tolerance', 1e-3)!r}, {bool(accuracy.get('ignore_non_fp'))!r}"
                 "  # the test's rule: same() against a float64 run",
         "strict": f"TOL = {accuracy.get('tolerance', 1e-3)!r}  # the test's rule: allclose at TOL",
         "assert_close": f"RTOL, ATOL = {accuracy.get('rtol')!r}, {accuracy.get('atol')!r}  # the test's rule: assert_close",
         "sqnr": f"MIN_SQNR_DB = {accuracy.get('min_sqnr_db', 30.0)!r}  # the test's rule: SQNR against eager",
         }[mode if mode in JUDGES else "fp64"],
        f"JUDGED = {options.get('judged_outputs') or None!r}  # the outputs judged (None: all)",
    ]
    body = f'''

def child(package, inputs, outputs):  # the compiled run, in a child: a crash ends it, not the check
    try:
        compiled = torch._inductor.aoti_load_package(package)
    except Exception as e:
        sys.exit(print(f"{{type(e).__name__}}: {{e}}", file=sys.stderr) or 17)  # 17: a load error
    if SEED is not None:
        torch.manual_seed(SEED)
    torch.save(compiled(*torch.load(inputs)), outputs)


def judged(e, c, model64):
    {judge}


def check():
    inputs = [x.to(DEVICE) if isinstance(x, torch.Tensor) else x for x in INPUTS]
    work = tempfile.mkdtemp(prefix="aoti_standalone_")
    atexit.register(shutil.rmtree, work, True)
    package, saved_in, saved_out = (os.path.join(work, f) for f in ("model.pt2", "in.pt", "out.pt"))
    try:
        program = torch.export.export(Repro().to(DEVICE), tuple(inputs), dynamic_shapes=DYNAMIC_SHAPES)
        torch._inductor.aoti_compile_and_package(program, package_path=package, inductor_configs=CONFIGS)
    except Exception as e:
        return "compile error", f"{{type(e).__name__}}: {{e}}"
    torch.save(inputs, saved_in)
    try:
        proc = subprocess.run([sys.executable, __file__, "--child", package, saved_in, saved_out],
                              capture_output=True, text=True, timeout=TIMEOUT, env={{**os.environ, **ENV}})
    except subprocess.TimeoutExpired:
        return "timeout", f"the compiled model ran past {{TIMEOUT}} s"
    if proc.returncode:
        kind = "load error" if proc.returncode == 17 else "runtime error"
        return (kind if proc.returncode > 0 else f"signal {{signal.Signals(-proc.returncode).name}}"), proc.stderr
    with torch.no_grad():
        if SEED is not None:
            torch.manual_seed(SEED)
        e, c = leaves(Repro().to(DEVICE)(*inputs))[:JUDGED], leaves(torch.load(saved_out))[:JUDGED]
        if len(e) != len(c):
            return "accuracy", f"the compiled model returned {{len(c)}} outputs, eager {{len(e)}}"
        if judged(e, c, lambda *a: leaves(Repro().to(DEVICE).double()(*a))[:JUDGED]):
            return "passes", ""
    return "accuracy", "the compiled model's outputs differ from eager's under the test's rule"


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        sys.exit(child(*sys.argv[2:]))
    reason, message = check()
    hit = reason == FAILURE and CHECK in message
    print(f"repro_standalone.py: {{reason}}{{': ' + message[-2000:] if message else ''}}")
    print("repro_standalone.py: the failure REPRODUCES" if hit else f"repro_standalone.py: expected {{FAILURE}}; it does not reproduce")
    sys.exit(1 if hit else 0 if reason == "passes" else 2)
'''
    text = (header(lines) + "\n".join(pre) + "\n\n" + "\n".join(const) + "\n" + (DRAWN if tensors.drawn else "")
            + "\n\n" + program + f"\n\nINPUTS = [{', '.join(inputs)}]\nDYNAMIC_SHAPES = {dyn_src}\n" + body)
    return text, tensors


def repro_parse(repro, v):
    sys.path.insert(0, os.path.dirname(os.path.abspath(repro.__file__)))
    from aoti_aten_fallbacks import parse_config_value

    return parse_config_value(v)


def note_compile(status, seconds):
    """A line in $AOTI_COMPILE_LEDGER, where it is set, for the AOTI compile a run of the file
    made: CI counts its compiles there (tools/ci_phases.sh). Never fails the run."""
    path = os.environ.get("AOTI_COMPILE_LEDGER")
    if not path:
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            os.write(fd, f"{time.time():.3f} {os.getpid()} {status} {seconds:.1f}\n".encode())
        finally:
            os.close(fd)
    except OSError as e:
        print(f"standalone.py: the compile ledger {path} is not written ({e})", file=sys.stderr)


def run_alone(path, timeout_s, inductor_cache=None):
    """Runs the file (and its tensors file) copied into an empty directory, with nothing but
    torch and the standard library importable: (exit status, output, seconds). inductor_cache:
    a directory kept from one run to the next for what torch keeps between runs: inductor's
    cache (TORCHINDUCTOR_CACHE_DIR=<it>/inductor) and the temporary directory (TMPDIR=<it>/tmp),
    where inductor builds its precompiled headers whatever TORCHINDUCTOR_CACHE_DIR says, so
    that they are built once, not by every run; the run's own files are still its own (the
    file removes its working directory) and it runs in the empty directory. None: both in the
    empty directory, as a maintainer's first run has them."""
    alone = tempfile.mkdtemp(prefix="aoti_standalone_alone_")
    try:
        stem = os.path.splitext(os.path.basename(path))[0]
        for name in os.listdir(os.path.dirname(os.path.abspath(path))):
            if name == stem + ".py" or name == stem + "_tensors.pt":
                shutil.copy(os.path.join(os.path.dirname(os.path.abspath(path)), name), alone)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["TMPDIR"] = alone
        env.pop("TORCHINDUCTOR_CACHE_DIR", None)
        if inductor_cache:
            for name, var in (("inductor", "TORCHINDUCTOR_CACHE_DIR"), ("tmp", "TMPDIR")):
                env[var] = os.path.join(inductor_cache, name)
                os.makedirs(env[var], exist_ok=True)
        start = time.monotonic()
        try:
            proc = subprocess.run([sys.executable, stem + ".py"], cwd=alone, env=env, capture_output=True, text=True,
                                  timeout=timeout_s)
            code, output = proc.returncode, proc.stdout + proc.stderr[-3000:]
        except subprocess.TimeoutExpired:
            code, output = -1, f"ran past {timeout_s} s"
        note_compile("standalone", time.monotonic() - start)
        return code, output, time.monotonic() - start
    finally:
        shutil.rmtree(alone, ignore_errors=True)


def verdict_of(output):
    """What the file said it saw: "compile error", "accuracy", "passes", ..., or None."""
    found = re.search(r"^repro_standalone\.py: (compile error|load error|runtime error|accuracy|passes|timeout|"
                      r"signal \w+|[^:\n]+)(?::|$)", output, flags=re.M)
    return found.group(1) if found else None

def verify(repro, out, timeout_s, inductor_cache=None):
    """Writes the file and runs it alone; where a tensor was drawn from a seed and the
    failure does not reproduce so, writes it again with the exact values and runs that.
    Returns the record written beside it (<stem>.json)."""
    record = {"file": os.path.basename(out), "runs": 0, "seconds": 0.0, "inductor_cache": inductor_cache}
    written, why, drawn = write_standalone(repro, out, seeded=True)
    while True:
        record.update(written=written, why_not=why, values="seeded" if drawn else "exact")
        if not written:
            record.update(reproduces=False, exit_code=3)
            break
        code, output, seconds = run_alone(out, timeout_s, inductor_cache)
        record["runs"] += 1
        record["seconds"] = round(record["seconds"] + seconds, 1)
        record.update(exit_code=code, reproduces=code == 1, verdict=verdict_of(output), output=output[-2000:])
        if code == 1 or not drawn:
            break
        written, why, drawn = write_standalone(repro, out, seeded=False)
    with open(out) as f:
        record["lines"] = sum(1 for _ in f)
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump(record, f, indent=1)
    return record


# --- upstream_issue.md ----------------------------------------------------------------

CLASS_WORDS = {"accuracy": "accuracy drift", "compile error": "compile error", "runtime error": "runtime error"}
# The lines of torch.utils.collect_env's report a maintainer reads for a CPU compile bug.
ENV_KEYS = ("PyTorch version", "Is debug build", "CUDA used to build", "OS", "GCC version", "Clang version",
            "Python version", "Python platform", "Is CUDA available", "CUDA runtime version", "GPU models",
            "Nvidia driver version", "Architecture", "Model name", "CPU(s)", "Flags")


def short_op(op):
    """aten.relu.default -> relu; ns.name.overload -> ns.name."""
    parts = op.split(".")
    if len(parts) >= 2 and parts[0] == "aten":
        return parts[1]
    return ".".join(parts[:2]) if len(parts) >= 2 else op


def collected_env(timeout_s=300):
    """torch.utils.collect_env's report, cut to ENV_KEYS (the CPU flags to the vector ones);
    (text, problem)."""
    try:
        done = subprocess.run([sys.executable, "-m", "torch.utils.collect_env"], capture_output=True, text=True,
                              timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "", f"python -m torch.utils.collect_env did not finish ({type(e).__name__}: {e})"
    if done.returncode != 0:
        return "", f"python -m torch.utils.collect_env exited {done.returncode}: {done.stderr.strip()[-300:]}"
    kept = []
    for line in done.stdout.splitlines():
        key = line.split(":", 1)[0].strip()
        if key in ENV_KEYS:
            if key == "Flags":
                flags = [f for f in line.split(":", 1)[1].split() if re.match(r"(avx|sse4|fma|amx|neon|sve)", f)]
                line = "Flags (vector): " + " ".join(flags)
            kept.append(line.rstrip())
    return "\n".join(kept), ""


def issue_text(repro, repro_dir, standalone_path, record, env_text, env_problem):
    """upstream_issue.md: the issue as PyTorch's bug template asks for it; `repro` is
    load_repro(repro_dir)."""
    import torch

    summary = {}
    path = os.path.join(repro_dir, "summary.json")
    if os.path.isfile(path):
        with open(path) as f:
            summary = json.load(f)
    stage = summary.get("stage") or {}
    op = stage.get("culprit_op") or ""
    if not op:
        ops = summary.get("ops") or sorted({str(n.target) for n in repro.load_program().graph_module.graph.nodes
                                            if n.op == "call_function" and "getitem" not in str(n.target)})
        ops = [o for o in ops if not o.startswith("aten.") or o.split(".")[1] not in ("clone", "view", "_to_copy")]
        op = ops[0] if len(ops) == 1 else ""
    klass = repro.FAILURE_CLASS
    what = CLASS_WORDS.get(klass, "crash (" + klass + ")" if klass.startswith("signal") else klass)
    where = [repro.DEVICE.upper()]
    if repro.DEVICE == "cpu":
        where.append(torch.backends.cpu.get_cpu_capability())
    title = f"[AOTI] {short_op(op) if op else 'program'}: {what}"
    if stage.get("ran") and stage.get("stage"):
        title += f" in {stage['stage'].split(' (')[0]}"
    title += f" ({', '.join(where)})"
    with open(standalone_path) as f:
        script = f.read()
    beside = os.path.splitext(os.path.basename(standalone_path))[0] + "_tensors.pt"
    has_beside = os.path.exists(os.path.join(os.path.dirname(os.path.abspath(standalone_path)), beside))
    expected = {
        "accuracy": "the compiled model's outputs agree with eager's within the rule the script applies "
                    f"({repro.OPTIONS['accuracy'].get('mode', 'fp64')}: "
                    + ("`torch._dynamo.utils.same` against a float64 run" if repro.OPTIONS['accuracy'].get('mode', 'fp64') == "fp64"
                       else "as the script's judge says") + ")",
        "compile error": "`aoti_compile_and_package` compiles the program",
    }.get(klass, "the compiled model runs to the end and returns eager's values")
    md = [f"# {title}", "", "### 🐛 Describe the bug", ""]
    nodes = summary.get("nodes_after")
    intro = "`torch._inductor.aoti_compile_and_package` of the program below"
    if nodes is not None:
        intro += (f" ({nodes} node{'s' if nodes != 1 else ''}, reduced from {summary.get('nodes_before')}"
                  + (f" of `{summary.get('package')}`" if summary.get("package") else "") + ")")
    md.append(intro + f" gives {'an' if what[0] in 'aeiou' else 'a'} {what}" + (f": {repro.CHECK_STR}" if repro.CHECK_STR else "") + ".")
    md += ["", f"**Expected:** {expected}.", ""]
    if record and record.get("reproduces"):
        md.append(f"**Observed:** the script below exits 1 (`{record.get('verdict') or klass}`): run alone with only torch "
                  f"importable, it reproduced in {record.get('seconds')} s.")
    elif record:
        md.append(f"**Observed:** NOT CONFIRMED: the script run alone exited {record.get('exit_code')}"
                  f" ({record.get('verdict') or record.get('why_not') or 'no verdict'}); the harness's repro.py reproduces.")
    else:
        md.append("**Observed:** the script exits 1 when it reproduces (it was not run alone when this text was written: "
                  "`standalone.py --verify` runs it).")
    md += ["", "```python", script.rstrip("\n"), "```", ""]
    if has_beside:
        md += [f"The script reads `{beside}` beside it (tensors too large to inline, their values matter): attach it.", ""]
    if stage.get("ran"):
        md.append(f"**Where it breaks:** {stage.get('stage')}" + (f": {stage['stage_reason']}" if stage.get("stage_reason") else "") + ".")
        if stage.get("workaround_verified"):
            md.append(f"**Workaround (verified on the original model):** {stage.get('workaround_what')}: "
                      f"`{json.dumps(stage.get('workaround'))}`.")
        md.append("")
    bisect = summary.get("torch_bisect") or {}
    if bisect.get("newest_passing") or bisect.get("oldest_failing"):
        md += [f"**Regression:** passes with torch {bisect.get('newest_passing') or '(none tried passes)'}, "
               f"fails from {bisect.get('oldest_failing') or '(none tried fails)'}.", ""]
    md += ["### Versions", "", "```"]
    md.append(env_text if env_text else f"(not collected: {env_problem})")
    md += ["```", ""]
    return "\n".join(md)


def write_issue(repro, repro_dir, standalone_path, out_path):
    record = None
    rec_path = os.path.splitext(standalone_path)[0] + ".json"
    if os.path.isfile(rec_path):
        with open(rec_path) as f:
            record = json.load(f)
    env_text, env_problem = collected_env()
    text = issue_text(repro, repro_dir, standalone_path, record, env_text, env_problem)
    with open(out_path, "w") as f:
        f.write(text)
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repro_dir", help="a repro directory the reducer wrote (repro.py, repro.pt2)")
    parser.add_argument("--out", help="the file to write (default REPRO_DIR/repro_standalone.py)")
    parser.add_argument("--verify", action="store_true",
                        help="run the file alone (one AOTI compile; two where values drawn from a seed do not "
                             "reproduce), keep the form that reproduces, and write <stem>.json: whether it does")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds a --verify run may take")
    parser.add_argument("--inductor-cache", metavar="DIR",
                        help="a directory kept across --verify's runs for what torch keeps between runs: "
                             "inductor's cache (DIR/inductor) and the temporary directory (DIR/tmp), where inductor "
                             "builds its precompiled headers: built once, not by every run. Default: both new, in "
                             "the run's empty directory")
    parser.add_argument("--issue", action="store_true",
                        help="also write upstream_issue.md beside the file: the issue for PyTorch's tracker (title "
                             "naming the op, class and stage; the script inline; expected and observed; the verified "
                             "workaround; torch's regression range; torch.utils.collect_env's report)")
    args = parser.parse_args(argv)
    # Under `bazel run`, paths are the user's: relative to where the command was typed.
    where = os.environ.get("BUILD_WORKING_DIRECTORY", os.getcwd())
    repro_dir = os.path.join(where, args.repro_dir)
    out = os.path.join(where, args.out) if args.out else os.path.join(repro_dir, "repro_standalone.py")
    if not os.path.isfile(os.path.join(repro_dir, "repro.py")):
        print(f"standalone.py: {repro_dir} holds no repro.py (expected a repro directory the reducer wrote)",
              file=sys.stderr)
        return 2
    if not os.access(os.path.dirname(os.path.abspath(out)), os.W_OK):
        print(f"standalone.py: cannot write {out} (its directory is not writable; Bazel's test outputs are "
              "read-only): name a file elsewhere with --out", file=sys.stderr)
        return 2
    repro = load_repro(os.path.abspath(repro_dir))
    issue_path = os.path.join(os.path.dirname(os.path.abspath(out)), "upstream_issue.md")

    def issue():
        if args.issue:
            write_issue(repro, repro_dir, out, issue_path)
            print(f"standalone.py: wrote {issue_path}")

    if args.verify:
        cache = os.path.join(where, args.inductor_cache) if args.inductor_cache else None
        if cache:
            os.makedirs(cache, exist_ok=True)
        record = verify(repro, out, args.timeout, cache)
        print(f"standalone.py: {out}: {record['lines']} lines, values {record['values']}, "
              + ("REPRODUCES" if record["reproduces"] else f"does not reproduce (exit {record['exit_code']})")
              + (f" ({record['verdict']})" if record.get("verdict") else "")
              + f" in {record['runs']} run(s), {record['seconds']} s" + (f"; {record['why_not']}" if record["why_not"] else ""))
        if not record["reproduces"] and record.get("output"):
            print(record["output"])
        if record["written"]:
            issue()
        return 0 if record["reproduces"] else 1
    written, why, _ = write_standalone(repro, out)
    if written:
        with open(out) as f:
            print(f"standalone.py: wrote {out} ({sum(1 for _ in f)} lines)")
        issue()
        return 0
    print(f"standalone.py: {out} says why it cannot be written as source: {why}")
    return 3


if __name__ == "__main__":
    sys.exit(main())
