#!/usr/bin/env python3
"""gen_programs: random small PyTorch programs for the interpreter's differential fuzzing.

Each program is a model file (the aoti_package contract: make_model, example_inputs) whose
forward is a random chain of common ATen ops, drawn from the grammar below and checked
line by line on real tensors as it is built. For each program this tool writes

  pNNNN.py            the model file (readable: a mismatch is its own repro)
  pNNNN.pt2           the program, packaged by tools/package_model.py --export-only
  pNNNN.expected/     the exported program run by Python (ep.module()), as a tensor bundle:
                      what the C++ interpreter must reproduce bit for bit

and a summary.json with counts: programs written, candidates skipped (and why), and how
many programs' exported graph differs numerically from the module it came from (export's
own decompositions, reported, not the interpreter's concern).

Usage: gen_programs.py --out DIR --count N [--seed S] [--include MODEL.py ...]
--include packages model files as they are (regressions: programs that once mismatched),
as rNNNN.py/.pt2/.expected, before the random ones.
Everything runs on one thread, as the checker does, so reductions split the same way.
"""

import argparse
import io
import json
import os
import random
import sys
import time
import warnings

warnings.filterwarnings("ignore")

HERE = os.path.dirname(os.path.abspath(__file__))


def log(msg):
    print(f"[gen_programs] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------
# The grammar. Each rule takes (rng, pick) and returns an expression in the values it
# picked, or None. pick(kind) returns the name of a live value of that kind ("float":
# floating point, "any": any tensor, "nd2": at least 2-D floating, "int": an integer
# index tensor), or None. Shapes are not tracked by the rules: every candidate line is
# run before it is kept, and one that raises is dropped.

UNARY = [
    "torch.relu({a})", "torch.sigmoid({a})", "torch.tanh({a})", "torch.exp({a}.clamp(max=10))",
    "torch.log({a}.abs() + 1)", "torch.sqrt({a}.abs())", "torch.neg({a})", "torch.abs({a})",
    "torch.sin({a})", "torch.cos({a})", "F.gelu({a})", "F.gelu({a}, approximate='tanh')",
    "F.silu({a})", "F.softplus({a})", "torch.erf({a})", "torch.rsqrt({a}.abs() + 0.5)",
    "torch.reciprocal({a} + 3)", "torch.floor({a})", "torch.ceil({a})", "torch.round({a})",
    "torch.sign({a})", "{a}.clamp(min=-0.5, max=0.5)", "F.leaky_relu({a}, 0.1)", "F.hardtanh({a})",
    "F.elu({a})", "torch.log1p({a}.abs())", "torch.expm1({a}.clamp(max=5))", "{a}.pow(2)",
    "torch.square({a})", "F.hardswish({a})", "F.mish({a})", "torch.trunc({a})", "torch.frac({a})",
    "F.hardsigmoid({a})", "torch.nan_to_num({a}, nan=0.0, posinf=1.0, neginf=-1.0)",
    "F.normalize({a}, dim=-1)", "F.dropout({a}, p=0.5, training=False)", "{a} * 0.5 + 1",
    "torch.rsub({a}, 1.0)", "torch.atan({a})", "torch.asinh({a})", "{a}.float()", "{a}.to(torch.float16)",
    "{a}.to(torch.bfloat16)", "{a}.to(torch.float64)", "{a}.to(torch.int32)", "({a} > 0)",
    "torch.isnan({a})", "torch.isinf({a})", "{a}.clone()", "{a}.contiguous()",
]
BINARY = [
    "{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / ({b}.abs() + 1)", "torch.maximum({a}, {b})",
    "torch.minimum({a}, {b})", "torch.where({a} > {b}, {a}, {b})", "torch.atan2({a}, {b})",
    "torch.fmod({a}, 1.5)", "torch.remainder({a}, 1.5)", "torch.add({a}, {b}, alpha=0.5)",
    "torch.hypot({a}, {b})", "torch.lerp({a}, {b}, 0.3)", "torch.addcmul({a}, {a}, {b}, value=0.5)",
    "torch.sub({a}, {b}, alpha=2)", "{a} ** 2 - {b}", "torch.pow({a}.abs() + 0.1, 0.7)",
    "torch.eq({a}, {b})", "torch.lt({a}, {b}).to({a}.dtype)", "torch.logical_and({a} > 0, {b} > 0)",
    "torch.masked_fill({a}, {b} > 0, 0.5)", "torch.where({b} > 0, {a}, 0.0)", "torch.clamp({a}, {b}, None)",
    "torch.copysign({a}, {b})", "torch.xlogy({a}.abs(), {b}.abs())",
]
REDUCE = [
    "{a}.sum(dim={d})", "{a}.sum(dim={d}, keepdim=True)", "{a}.mean(dim={d})", "{a}.amax(dim={d})",
    "{a}.amin(dim={d}, keepdim=True)", "torch.max({a}, dim={d})[0]", "torch.max({a}, dim={d})[1]",
    "torch.min({a}, dim={d}).values", "{a}.argmax(dim={d})", "{a}.prod(dim={d})",
    "{a}.var(dim={d}, correction=1)", "{a}.std(dim={d}, correction=0)", "torch.logsumexp({a}, dim={d})",
    "torch.softmax({a}, dim={d})", "torch.log_softmax({a}, dim={d})", "torch.cumsum({a}, dim={d})",
    "torch.cumprod({a}.clamp(-2, 2), dim={d})", "{a}.sum()", "{a}.mean()", "torch.norm({a}, p=2, dim={d})",
    "torch.linalg.vector_norm({a}, ord=2, dim={d})", "({a} > 0).all(dim={d})", "({a} > 0).any()",
    "torch.topk({a}, 2, dim={d})[0]", "torch.topk({a}, 1, dim={d}, largest=False)[1]",
    "torch.sort({a}, dim={d})[0]", "torch.sort({a}, dim={d}, descending=True)[1]", "torch.argsort({a}, dim={d})",
    "torch.cummax({a}, dim={d})[0]", "{a}.count_nonzero(dim={d})", "torch.var_mean({a}, dim={d})[0]",
]
SHAPE = [
    "{a}.reshape(-1)", "{a}.flatten(1)", "{a}.unsqueeze({d})", "{a}.squeeze()", "{a}.transpose(0, -1)",
    "{a}.permute(*reversed(range({a}.dim())))", "{a}.t()", "{a}[0]", "{a}[..., 1:]", "{a}[:, ::2]",
    "{a}.narrow({d}, 0, 1)", "torch.cat([{a}, {a}], dim={d})", "torch.cat([{a}, {b}], dim={d})",
    "torch.stack([{a}, {a} * 2], dim={d})", "torch.split({a}, 2, dim={d})[0]", "torch.chunk({a}, 2, dim={d})[-1]",
    "torch.flip({a}, dims=[{d}])", "torch.roll({a}, 1, dims={d})", "{a}.repeat(2, *([1] * ({a}.dim() - 1)))",
    "{a}.unsqueeze(0).expand(3, *{a}.shape)", "{a}.expand(2, *{a}.shape).sum(0)", "torch.triu({a})",
    "torch.tril({a}, diagonal=-1)", "F.pad({a}, (1, 2))", "F.pad({a}, (1, 1), value=-1.0)",
    "{a}.view({a}.shape[0], -1)", "{a}.movedim(0, -1)", "torch.index_select({a}, {d}, torch.tensor([0, 0]))",
    "torch.gather({a}, {d}, torch.zeros_like({a}, dtype=torch.int64))", "{a}.diagonal()", "{a}.unbind({d})[0]",
    "{a}.select({d}, 0)", "{a}.mT", "{a}.split_with_sizes([1, {a}.shape[{d}] - 1], dim={d})[1]",
    "torch.zeros_like({a}) + {a}", "torch.ones_like({a}).cumsum(-1) * {a}", "torch.full_like({a}, 2.5)",
    "{a} + torch.arange({a}.shape[-1], dtype={a}.dtype)", "{a}.new_zeros({a}.shape[-1]) + 1",
    "torch.scatter_add({a}, {d}, torch.zeros_like({a}, dtype=torch.int64), {a})",
    "{a}.masked_fill(torch.ones_like({a}, dtype=torch.bool).triu(), float('-inf'))",
]
MATMUL = [
    "{a} @ {a}.mT", "{a}.mT @ {a}", "torch.matmul({a}, {b}.mT)", "torch.einsum('...ij,...kj->...ik', {a}, {a})",
    "F.linear({a}, self_param([7, {a}.shape[-1]]))", "F.linear({a}, self_param([5, {a}.shape[-1]]), self_param([5]))",
    "F.layer_norm({a}, {a}.shape[-1:])", "F.layer_norm({a}, {a}.shape[-1:], self_param([{a}.shape[-1]]), self_param([{a}.shape[-1]]))",
    "F.rms_norm({a}, {a}.shape[-1:], eps=1e-6)", "F.group_norm({a}, 1)",
    "F.batch_norm({a}, self_buffer([{a}.shape[1]]), self_buffer([{a}.shape[1]], positive=True), training=False)",
    "F.conv1d({a}, self_param([4, {a}.shape[1], 3]), padding=1)",
    "F.conv2d({a}, self_param([4, {a}.shape[1], 3, 3]), padding=1)",
    "F.conv2d({a}, self_param([{a}.shape[1], 1, 3, 3]), stride=2, groups={a}.shape[1])",
    "F.max_pool2d({a}, 2)", "F.avg_pool2d({a}, 2, ceil_mode=True)", "F.adaptive_avg_pool2d({a}, 1)",
    "F.interpolate({a}, scale_factor=2, mode='nearest')", "F.interpolate({a}, scale_factor=2, mode='bilinear')",
    "F.scaled_dot_product_attention({a}, {a}, {a})", "F.scaled_dot_product_attention({a}, {a}, {a}, is_causal=True)",
    "torch.addmm(self_param([{a}.shape[-1]]), {a}, self_param([{a}.shape[-1], {a}.shape[-1]]))",
    "torch.baddbmm({a}, {a}, {a}.mT[..., :{a}.shape[-1]])", "torch.bmm({a}, {a}.mT)",
    "F.embedding({i}, self_param([11, 6]))", "F.embedding({i}.clamp(0, 10), self_param([11, 4]))",
    "F.one_hot({i}.clamp(0, 4), 5).float()", "F.cross_entropy({a}.flatten(0, -2), torch.zeros({a}.flatten(0, -2).shape[0], dtype=torch.int64))",
    "F.softmax({a}.float(), dim=-1).to({a}.dtype)", "F.glu(torch.cat([{a}, {a}], dim=-1))",
]
INPLACE = [
    "{v}.add_(1)", "{v}.mul_(0.5)", "{v}.clamp_(-1, 1)", "{v}.relu_()", "{v}.sub_({v} * 0.1)",
    "{v}[..., 0] = 0.25", "{v}.masked_fill_({v} < 0, 0.0)", "{v}.copy_({v}.flip(-1))", "{v}.neg_()",
]
RULES = [("unary", UNARY, 4), ("binary", BINARY, 4), ("reduce", REDUCE, 3), ("shape", SHAPE, 3),
         ("matmul", MATMUL, 3), ("inplace", INPLACE, 1)]


class Builder:
    """Grows one program: live values with their tensors, the forward's lines, parameters."""

    def __init__(self, rng, torch):
        self.rng, self.torch = rng, torch
        self.env = {}      # name -> tensor (the values as the forward sees them)
        self.lines = []
        self.params = []   # (name, shape, kind)
        self.inputs = []   # (name, construction source)
        self.n = 0

    def pick(self, kind):
        t = self.torch
        # Inputs (x*) and intermediates (v*); parameters (p*) are reached through self.
        names = [k for k, v in self.env.items() if isinstance(v, t.Tensor) and k[0] in "xv"]
        if kind == "float":
            names = [k for k in names if self.env[k].is_floating_point()]
        elif kind == "nd2":
            names = [k for k in names if self.env[k].is_floating_point() and self.env[k].dim() >= 2]
        elif kind == "int":
            names = [k for k in names if self.env[k].dtype in (t.int64, t.int32)]
        if not names:
            return None
        # Prefer recent values, so programs grow chains rather than fans.
        weights = [1.0 + i for i in range(len(names))]
        return self.rng.choices(names, weights)[0]

    def _param(self, shape, buffer=False, positive=False):
        t = self.torch
        shape = [int(s) for s in shape]
        if any(s <= 0 or s > 64 for s in shape):
            raise ValueError("parameter shape out of range")
        name = f"p{len(self.params)}"
        value = t.randn(shape)
        if positive:
            value = value.abs() + 0.5
        self.params.append((name, shape, "buffer" if buffer else "param", positive))
        self.env[name] = value
        return name

    def try_line(self, expr, target=None):
        """Runs `target = expr` (or the statement itself) on the live values; keeps it if it
        runs and yields a tensor small enough, else undoes it."""
        t = self.torch
        import torch.nn.functional as F

        pending = []

        def self_param(shape):
            name = self._param(shape)
            pending.append(name)
            return self.env[name]

        def self_buffer(shape, positive=False):
            name = self._param(shape, buffer=True, positive=positive)
            pending.append(name)
            return self.env[name]

        saved = {k: (v.clone() if isinstance(v, t.Tensor) else v) for k, v in self.env.items()}
        scope = dict(self.env, torch=t, F=F, self_param=self_param, self_buffer=self_buffer)
        try:
            with t.no_grad():
                if target is None:
                    exec(expr, scope)  # an in-place statement on a live value
                    result = None
                else:
                    result = eval(expr, scope)
            if target is not None:
                if not isinstance(result, t.Tensor) or result.numel() > 4096 or result.dim() > 5:
                    raise ValueError("not a small tensor")
                if result.dtype in (t.complex64, t.complex128):
                    raise ValueError("complex")
        except Exception:
            for name in pending:
                self.params.pop()
                del self.env[name]
            self.env.update(saved)
            return False
        # Rewrite self_param(...) / self_buffer(...) calls into the module's attributes.
        for name in pending:
            expr = _replace_first_call(expr, ("self_param(", "self_buffer("), f"self.{name}")
        if target is None:
            self.lines.append(expr)
        else:
            self.env[target] = result
            self.lines.append(f"{target} = {expr}")
        return True

    def step(self):
        rng = self.rng
        _, rule, _ = rng.choices(RULES, [w for _, _, w in RULES])[0]
        template = rng.choice(rule)
        if rule is INPLACE:
            a = self.pick("float")
            if a is None:
                return False
            if a.startswith("x") and rng.random() < 0.3:
                # A user-input mutation (exported as the in-place op on the input).
                return self.try_line(template.format(v=a))
            # Otherwise on an intermediate this program owns: a clone first.
            owned = f"v{self.n}"
            if not self.try_line(f"{a}.clone()", owned):
                return False
            self.n += 1
            self.try_line(template.format(v=owned))
            return True
        a = self.pick("nd2" if rule is MATMUL else "float")
        b = self.pick("float")
        i = self.pick("int")
        if a is None:
            return False
        dim = self.env[a].dim() if isinstance(self.env.get(a), self.torch.Tensor) else 1
        d = rng.randrange(-max(dim, 1), max(dim, 1))
        if "{i}" in template and i is None:
            return False
        expr = template.format(a=a, b=b or a, d=d, i=i)
        target = f"v{self.n}"
        if self.try_line(expr, target):
            self.n += 1
            return True
        return False


def _replace_first_call(expr, prefixes, replacement):
    """Replaces the first self_param(...)/self_buffer(...) call (balanced parentheses)."""
    starts = [(expr.find(p), p) for p in prefixes if expr.find(p) >= 0]
    if not starts:
        return expr
    start, prefix = min(starts)
    depth, j = 0, start + len(prefix) - 1
    while j < len(expr):
        depth += {"(": 1, ")": -1}.get(expr[j], 0)
        if depth == 0:
            break
        j += 1
    return expr[:start] + replacement + expr[j + 1:]


def random_shape(rng):
    dims = rng.choice([1, 2, 2, 3, 3, 4])
    return [rng.choice([1, 2, 3, 4, 5, 6]) for _ in range(dims)]


def input_source(rng, shape, special):
    src = f"torch.randn({shape})"
    if special:
        # A few special values: NaN, +-Inf, zeros, large magnitudes.
        src = (f"_special(torch.randn({shape}), {rng.randrange(1 << 30)})")
    return src


MODEL_TEMPLATE = '''"""Fuzz program {name} (testdata/fuzz/gen_programs.py, seed {seed}). {count} lines."""
import torch
import torch.nn.functional as F


def _special(t, seed):
    g = torch.Generator().manual_seed(seed)
    flat = t.reshape(-1)
    picks = torch.randint(0, flat.numel(), (max(1, flat.numel() // 5),), generator=g)
    values = torch.tensor([float("nan"), float("inf"), float("-inf"), 0.0, 1e4, -1e-8])
    flat[picks] = values[torch.randint(0, len(values), picks.shape, generator=g)]
    return t


class Program(torch.nn.Module):
    def __init__(self):
        super().__init__()
{init}

    def forward(self, {args}):
{body}
        return ({ret},)


def make_model():
    return Program()


def example_inputs():
    return ({inputs},)
'''


def generate(rng, seed, name):
    import torch

    b = Builder(rng, torch)
    n_inputs = rng.choice([1, 1, 2, 2, 3])
    base = random_shape(rng)
    special = rng.random() < 0.25
    torch.manual_seed(seed)
    for k in range(n_inputs):
        if k > 0 and rng.random() < 0.2:
            shape = [rng.choice([1, 2, 3, 4, 5]) for _ in range(rng.choice([1, 2]))]
            src = f"torch.randint(0, 6, {shape})"
        else:
            shape = [s if rng.random() < 0.7 else 1 for s in base] if k else base
            src = input_source(rng, shape, special and k == 0)
        b.inputs.append((f"x{k}", src))
    # The model file draws its inputs after torch.manual_seed(seed + 1) (package_model's
    # contract); here the values only have to be representative, so draw them the same way.
    ns = {"torch": torch}
    exec(MODEL_TEMPLATE.split("class Program")[0], ns)
    torch.manual_seed(seed + 1)
    for nm, src in b.inputs:
        b.env[nm] = eval(src, ns)
    steps = rng.randint(3, 12)
    tries = 0
    while len(b.lines) < steps and tries < 60:
        b.step()
        tries += 1
    live = [k for k in b.env if k.startswith("v") and isinstance(b.env[k], torch.Tensor)]
    if not live:
        return None
    # Return the last value and every value no later line reads (up to four in all), so
    # export's dead-code elimination keeps most of what was generated.
    import re
    used = set()
    for k, line in enumerate(b.lines):
        rhs = line.split(" = ", 1)[1] if line.startswith("v") and " = " in line else line
        used.update(re.findall(r"\bv\d+\b", rhs))
    leaves = [v for v in live[:-1] if v not in used]
    outs = [live[-1]] + leaves[-3:]
    init = []
    for pname, shape, kind, positive in b.params:
        value = f"torch.randn({shape})" + (".abs() + 0.5" if positive else "")
        if kind == "param":
            init.append(f"        self.{pname} = torch.nn.Parameter({value})")
        else:
            init.append(f"        self.register_buffer({pname!r}, {value})")
    return len(b.lines), MODEL_TEMPLATE.format(
        name=name, seed=seed, count=len(b.lines), init="\n".join(init) or "        pass",
        args=", ".join(nm for nm, _ in b.inputs), body="\n".join("        " + l for l in b.lines),
        ret=", ".join(outs), inputs=", ".join(src for _, src in b.inputs))


def bundle(directory, tensors, pm):
    os.makedirs(directory, exist_ok=True)
    records = []
    for i, t in enumerate(tensors):
        records.append(pm.tensor_record(t, "", f"tensor_{i}.bin"))
        with open(os.path.join(directory, f"tensor_{i}.bin"), "wb") as f:
            f.write(pm.raw_bytes(t))
    with open(os.path.join(directory, "manifest.json"), "w") as f:
        json.dump(records, f)


def bit_equal(a, b, pm):
    return a.dtype == b.dtype and a.shape == b.shape and pm.raw_bytes(a) == pm.raw_bytes(b)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="directory to write the programs into")
    p.add_argument("--count", type=int, required=True, help="how many programs to write")
    p.add_argument("--seed", type=int, default=0, help="first seed; program k uses seed + k")
    p.add_argument("--include", nargs="*", default=[], help="model files to package as they are, first")
    p.add_argument("--package-model", default=os.path.join(HERE, "..", "..", "tools", "package_model.py"),
                   help="path of tools/package_model.py")
    args = p.parse_args(argv)
    if args.count <= 0:
        p.error(f"--count {args.count}: expected a positive number of programs")
    for f in args.include:
        if not os.path.isfile(f):
            p.error(f"--include {f!r}: no such model file")
    os.makedirs(args.out, exist_ok=True)
    sys.path.insert(0, os.path.dirname(os.path.abspath(args.package_model)))
    import package_model as pm
    import torch
    import torch.utils._pytree as pytree

    torch.set_num_threads(1)
    start = time.time()
    summary = {"programs": 0, "lines": 0, "skipped": {}, "export_differs_from_module": []}
    seed = args.seed
    queue = [(f"r{k:04d}", open(f).read()) for k, f in enumerate(args.include)]
    summary["included"] = len(queue)
    while summary["programs"] < args.count + len(args.include):
        if queue:
            name, source = queue.pop(0)
            program_seed = 0
        else:
            name = f"p{summary['programs'] - len(args.include):04d}"
            rng = random.Random(seed)
            program_seed = seed
            generated = generate(rng, seed, name)
            seed += 1
            if generated is None:
                summary["skipped"]["empty"] = summary["skipped"].get("empty", 0) + 1
                continue
            lines, source = generated
            summary["lines"] += lines
        path = os.path.join(args.out, name + ".py")
        with open(path, "w") as f:
            f.write(source)
        pt2 = os.path.join(args.out, name + ".pt2")
        # package_model logs each step; keep only what goes wrong.
        err = io.StringIO()
        saved, sys.stderr = sys.stderr, err
        try:
            rc = pm.main(["--model", path, "--out", pt2, "--export-only", "--seed", str(program_seed),
                          "--label", os.path.basename(path)])
        except BaseException as e:  # noqa: BLE001  (a generator bug must not stop the run)
            rc = f"{type(e).__name__}: {e}"
        finally:
            sys.stderr = saved
        if rc != 0:
            summary["skipped"]["export"] = summary["skipped"].get("export", 0) + 1
            reason = (str(rc) if rc != 2 else err.getvalue().strip().splitlines()[-1])[:300]
            summary.setdefault("export_failures", [])
            if len(summary["export_failures"]) < 10:
                summary["export_failures"].append(reason)
            for leftover in (path, pt2):
                if os.path.exists(leftover):
                    os.remove(leftover)
            continue
        # The reference: the exported program itself, run by Python on the recorded inputs.
        try:
            ep = torch.export.load(pt2)
            ex_args, ex_kwargs = ep.example_inputs
            with torch.no_grad():
                got = pytree.tree_leaves(ep.module()(*ex_args, **ex_kwargs))
            module = pm.load_model_file(path)
            model, m_args, m_kwargs, _ = pm.build_case(module, path, program_seed)
            with torch.no_grad():
                eager = pytree.tree_leaves(model.eval()(*m_args, **m_kwargs))
        except Exception as e:  # noqa: BLE001  (the exported program does not run in Python)
            summary["skipped"]["reference"] = summary["skipped"].get("reference", 0) + 1
            summary.setdefault("reference_failures", []).append(f"{name}: {type(e).__name__}: {e}"[:300])
            for leftover in (path, pt2):
                os.remove(leftover)
            continue
        bundle(os.path.join(args.out, name + ".expected"), got, pm)
        if len(eager) != len(got) or not all(bit_equal(a, b, pm) for a, b in zip(eager, got)):
            summary["export_differs_from_module"].append(name)
        summary["programs"] += 1
        if summary["programs"] % 25 == 0:
            log(f"{summary['programs']}/{args.count} programs ({time.time() - start:.0f}s)")
    summary["seconds"] = round(time.time() - start, 1)
    summary["first_seed"], summary["next_seed"] = args.seed, seed
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    log(f"wrote {summary['programs']} programs to {args.out} in {summary['seconds']}s; skipped {summary['skipped']}; "
        f"exported graph differs from its module in {len(summary['export_differs_from_module'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
