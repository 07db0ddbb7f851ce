#!/usr/bin/env python3
"""generated_corpus: seeded programs with a bug planted in any op, for the reducer's figures.

    generated_corpus.py generate --out REPO --harness PATH --seeds A:B
    generated_corpus.py summarize --repo REPO --testlogs DIR --results FILE.json [--table FILE.md]

`generate` writes a model repository (WORKSPACE reading the harness at PATH through
local_repository, as a user's repository does) with one program per seed in [A, B). Each
program is drawn from the seed alone:

  construct  straight, cond (the bug in the branch taken), while_loop (in the body, 3
             iterations), scan (in the cell), mask (after a boolean mask: a data-dependent
             size), kv_cache (before a buffer written in forward), autocast (in a bfloat16
             region)
  pattern    pointwise (a chain of pointwise ops), reduction (the chain, then a row sum),
             conv_bn_act (convolution, batch norm, the chain, relu), matmul_epilogue (a
             linear layer, then the chain)
  planted    one unary op of the chain, at its first, middle or last place; an op that no
             other node of the program lowers to (sin, cos, tanh, erf, abs, neg, sqrt, log1p,
             expm1, atan, reciprocal)
  kind       compile_error, runtime_error, signal, out_of_bounds, accuracy, drift, nan
             (tools/aoti_aten_fallbacks.py, PLANT_KINDS)
  names      the kernels' descriptive names on or off (cpp.descriptive_names)

For each: g<seed> and g<seed>_test (the program healthy: any failure is a false alarm), and
g<seed>_planted with g<seed>_planted_test (manual; the bug planted through
aoti_harness.plant_bug_TESTING_ONLY). programs.json lists each program's draw.

`summarize` reads each planted test's outputs.zip (its reduction's summary.json) and each
healthy test's result, and writes the figures: per failure class and per construct, the
share of planted cases reduced to the planted op, compiles p50 / p95 / max and wall p50 /
max, and the false alarms on the healthy twins.
"""
import argparse
import json
import os
import random
import re
import sys
import zipfile

CONSTRUCTS = ["straight", "cond", "while_loop", "scan", "mask", "kv_cache", "autocast"]
PATTERNS = ["pointwise", "reduction", "conv_bn_act", "matmul_epilogue"]
PLACES = ["first", "middle", "last"]
KINDS = ["compile_error", "runtime_error", "signal", "out_of_bounds", "accuracy", "drift", "nan"]
# The planted ops: each one ATen operator that lowers to one op of inductor's C++ code of
# the same name, written so that its input is in its domain; none is what the other nodes
# of a program lower to (the fillers: mul, add, sub; the patterns: convolution, batch norm's
# sub, mul, add and rsqrt, relu, addmm, sum).
PLANTABLE = {
    "sin": "torch.sin({h})",
    "cos": "torch.cos({h})",
    "tanh": "torch.tanh({h})",
    "erf": "torch.erf({h})",
    "abs": "torch.abs({h})",
    "neg": "torch.neg({h})",
    "sqrt": "torch.sqrt({h} * {h} + 1.0)",
    "log1p": "torch.log1p({h} * {h})",
    "expm1": "torch.expm1({h} * 0.25)",
    "atan": "torch.atan({h})",
    "reciprocal": "torch.reciprocal({h} * {h} + 1.0)",
}
FILLERS = ["{h} * 1.25", "{h} + 0.5", "{h} - 0.25", "{h} * 0.75 + 0.125"]
# What each failure class is called in summary.json.
CLASS_OF_KIND = {"compile_error": "compile error", "runtime_error": "runtime error", "signal": "signal",
                 "out_of_bounds": "signal", "accuracy": "accuracy", "drift": "accuracy", "nan": "accuracy"}


def draw(seed):
    rng = random.Random(seed)
    d = {
        "seed": seed,
        "construct": rng.choice(CONSTRUCTS),
        "pattern": rng.choice(PATTERNS),
        "place": rng.choice(PLACES),
        "op": rng.choice(sorted(PLANTABLE)),
        "kind": rng.choice(KINDS),
        "names": rng.choice([True, False]),
        "chain": rng.randint(3, 5),
    }
    d["fillers"] = [rng.choice(FILLERS) for _ in range(d["chain"] - 1)]
    return d


def chain_lines(d, h, indent):
    """The chain as statements on the variable h, the planted op at its place."""
    n = d["chain"]
    at = {"first": 0, "middle": n // 2, "last": n - 1}[d["place"]]
    fillers = iter(d["fillers"])
    lines = []
    for i in range(n):
        expr = PLANTABLE[d["op"]] if i == at else next(fillers)
        lines.append(f"{indent}{h} = {expr.format(h=h)}")
    return lines


def pre_post(d):
    """(the layers, the input's shape, the pattern's code before the chain, after it)."""
    p = d["pattern"]
    if p == "conv_bn_act":
        return (["self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)", "self.bn = torch.nn.BatchNorm2d(4)"],
                "(2, 3, 8, 8)", "self.bn(self.conv({x}))", "torch.relu({h})")
    if p == "matmul_epilogue":
        return ["self.lin = torch.nn.Linear(24, 40)"], "(6, 24)", "self.lin({x})", "{h}"
    if p == "reduction":
        return [], "(8, 37)", "{x} * 1.0", "{h}.sum(-1)"
    return [], "(8, 37)", "{x} * 1.0", "{h}"


def program_source(d):
    layers, shape, pre, post = pre_post(d)
    c = d["construct"]
    body, helpers, extra_init = [], [], []
    chain = lambda h, ind: chain_lines(d, h, ind)  # noqa: E731
    if c == "straight":
        body = [f"        h = {pre.format(x='x')}"] + chain("h", "        ") + [f"        return {post.format(h='h')}"]
    elif c == "cond":
        helpers = ["        def taken(x):", f"            h = {pre.format(x='x')}"] + chain("h", "            ") + [
            f"            return {post.format(h='h')}",
            "", "        def not_taken(x):", f"            h = {pre.format(x='x')}", "            h = h * 0.5",
            f"            return {post.format(h='h')}", ""]
        # The predicate holds for the sample inputs: the planted branch is the one taken.
        body = helpers + ["        return torch.cond(x.abs().sum() >= 0, taken, not_taken, (x,))"]
    elif c == "while_loop":
        helpers = ["        def more(i, h):", "            return i < 3", "", "        def step(i, h):"] + chain(
            "h", "            ") + ["            return i + 1, h * 0.5", ""]
        body = helpers + [f"        _, h = while_loop(more, step, (torch.zeros((), dtype=torch.int64), {pre.format(x='x')}))",
                          f"        return {post.format(h='h')}"]
    elif c == "scan":
        helpers = ["        def cell(carry, h):"] + chain("h", "            ") + [
            "            carry = carry * 0.5 + h", "            return carry, carry * 1.0", ""]
        body = helpers + [f"        h = {pre.format(x='x')}",
                          "        last, ys = scan(cell, torch.zeros_like(h[0]), h)",
                          f"        return {post.format(h='ys')}, last"]
    elif c == "mask":
        # The rows a mask keeps: their number is known only from the data.
        body = [f"        h = {pre.format(x='x')}", "        h = h[h > 0]"] + chain("h", "        ") + [
            "        return h.sum()"]
    elif c == "kv_cache":
        extra_init = ["self.register_buffer(\"cache\", torch.zeros(4, *CACHE_ROW))", "self.register_buffer(\"step\", torch.zeros((), dtype=torch.int64))"]
        body = [f"        h = {pre.format(x='x')}"] + chain("h", "        ") + [
            "        self.cache.index_copy_(0, (self.step % 4).reshape(1), h.unsqueeze(0))",
            "        self.step.add_(1)",
            f"        return {post.format(h='self.cache.sum(0)')}"]
    elif c == "autocast":
        body = ["        with torch.autocast(\"cpu\", dtype=torch.bfloat16):", f"            h = {pre.format(x='x')}"] + chain(
            "h", "            ") + [f"        return {post.format(h='h.float()')}"]
    imports = ["import torch"]
    if c == "while_loop":
        imports.append("from torch._higher_order_ops.while_loop import while_loop")
    if c == "scan":
        imports.append("from torch._higher_order_ops.scan import scan")
    row = {"conv_bn_act": "(2, 4, 8, 8)", "matmul_epilogue": "(6, 40)"}.get(d["pattern"], "(8, 37)")
    doc = (f'"""Generated program g{d["seed"]} (bench/generated_corpus.py, seed {d["seed"]}): {d["construct"]}, '
           f'{d["pattern"]};\nthe op planted on: {d["op"]}, at the {d["place"]} place of a chain of {d["chain"]}."""')
    lines = [doc] + imports + ["", f"CACHE_ROW = {row}", "", "", "class Generated(torch.nn.Module):",
                               "    def __init__(self):", "        super().__init__()"]
    lines += ["        " + layer for layer in layers + extra_init] or ["        pass"]
    lines += ["", "    def forward(self, x):"] + body + ["", "", "def make_model():",
                                                       f"    torch.manual_seed({d['seed']})",
                                                       "    return Generated()", "", "",
                                                       "def example_inputs():",
                                                       f"    g = torch.Generator().manual_seed({d['seed']})",
                                                       f"    return (torch.randn({shape}, generator=g),)", ""]
    return "\n".join(lines)


WORKSPACE = '''# Generated by bench/generated_corpus.py: a model repository of generated programs that
# uses the harness through local_repository, as a user's repository does.
workspace(name = "aoti_generated_corpus")

local_repository(name = "aoti_harness", path = "{h}")
local_repository(name = "platforms", path = "/usr/share/bazel/tools/platforms")
local_repository(name = "rules_java", path = "/usr/share/bazel/rules/java")
local_repository(name = "rules_cc", path = "{h}/third_party/rules_cc")
local_repository(name = "remote_coverage_tools", path = "{h}/third_party/remote_coverage_tools")

load("@aoti_harness//tools:repositories.bzl", "aoti_harness_dependencies")

aoti_harness_dependencies()
'''

BAZELRC = '''build --nosandbox_debug
build --cxxopt=-std=c++17
build --host_cxxopt=-std=c++17
build --incompatible_strict_action_env=false
test --test_output=errors
test --test_summary=terse
'''


def plant_configs(d):
    configs = {"aoti_harness.plant_bug_TESTING_ONLY": json.dumps({"op": d["op"], "kind": d["kind"]})}
    if d["kind"] == "runtime_error":
        configs["cpp.threads"] = "1"  # one thread: the exception reaches the caller
    if not d["names"]:
        configs["cpp.descriptive_names"] = "false"
    return configs


def generate(args):
    a, b = (int(v) for v in args.seeds.split(":"))
    if not 0 <= a < b:
        sys.exit(f"generated_corpus: --seeds {args.seeds!r}: expected A:B with 0 <= A < B")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "WORKSPACE"), "w") as f:
        f.write(WORKSPACE.format(h=os.path.abspath(args.harness)))
    with open(os.path.join(args.out, ".bazelrc"), "w") as f:
        f.write(BAZELRC)
    build = ['load("@aoti_harness//harness:defs.bzl", "aoti_model_test", "aoti_package")', ""]
    programs = []
    for seed in range(a, b):
        d = draw(seed)
        name = f"g{seed}"
        with open(os.path.join(args.out, name + ".py"), "w") as f:
            f.write(program_source(d))
        configs = plant_configs(d)
        build += [f'aoti_package(name = "{name}", model = "{name}.py")',
                  f'aoti_model_test(name = "{name}_test", size = "medium", package = ":{name}")',
                  f'aoti_package(name = "{name}_planted", model = "{name}.py", tags = ["manual"],',
                  f"    inductor_configs = {json.dumps(configs)})",
                  f'aoti_model_test(name = "{name}_planted_test", size = "large", package = ":{name}_planted", tags = ["manual"])',
                  ""]
        programs.append(dict(d, name=name, configs=configs))
    with open(os.path.join(args.out, "BUILD.bazel"), "w") as f:
        f.write("\n".join(build))
    with open(os.path.join(args.out, "programs.json"), "w") as f:
        json.dump(programs, f, indent=1)
    print(f"generated_corpus: {len(programs)} programs (seeds {a} to {b - 1}) in {args.out}")


def percentile(values, q):
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q / 100 * (len(s) - 1)))))]


def read_case(repo, testlogs, p):
    """What the planted test and the healthy test of one program did."""
    row = {k: p[k] for k in ("name", "seed", "construct", "pattern", "place", "op", "kind", "names")}
    row["class"] = CLASS_OF_KIND[p["kind"]]
    healthy = os.path.join(testlogs, p["name"] + "_test", "test.xml")
    row["healthy"] = "not run" if not os.path.exists(healthy) else "pass"
    if row["healthy"] == "pass" and re.search(r"<failure", open(healthy).read()):
        # The healthy twin failed. A verdict (accuracy) is the harness's: a false alarm. A
        # compile error or a crash of the healthy program is AOTI's own, a real bug the
        # generator found: the planted twin then says nothing of the reducer.
        log = os.path.join(testlogs, p["name"] + "_test", "test.log")
        found = re.search(r"AOTI check failed \(([^)]+)\)", open(log, errors="replace").read() if os.path.exists(log) else "")
        klass = found.group(1) if found else "unknown"
        row["healthy"] = "false alarm" if klass in ("accuracy", "unknown", "nondeterministic") else f"AOTI fails ({klass})"
    xml = os.path.join(testlogs, p["name"] + "_planted_test", "test.xml")
    z = os.path.join(testlogs, p["name"] + "_planted_test", "test.outputs", "outputs.zip")
    row["planted"] = "not run" if not os.path.exists(xml) else ("failed" if re.search(r"<failure", open(xml).read()) else "passed")
    row.update(reduced=False, to_op=False, compiles=None, seconds=None, nodes_after=None, ops=[], got_class=None)
    if os.path.exists(z):
        with zipfile.ZipFile(z) as f:
            names = [n for n in f.namelist() if n.endswith("repro/summary.json")]
            if names:
                s = json.loads(f.read(names[0]))
                row.update(reduced=bool(s.get("reduced")), compiles=s.get("compiles"), seconds=s.get("seconds"),
                           nodes_after=s.get("nodes_after"), ops=s.get("ops", []), got_class=s.get("failure_class"),
                           culprit=s.get("culprit_text"), nodes_before=s.get("nodes_before"))
                row["to_op"] = any(o.startswith(f"aten.{p['op']}.") for o in row["ops"])
            elif "diagnosis.md" in " ".join(f.namelist()):
                row["got_class"] = "no repro"
    return row


def table(rows, key):
    groups = {}
    for r in rows:
        groups.setdefault(r[key], []).append(r)
    out = [f"| {key} | planted | failed | reduced to the op | compiles p50 | p95 | max | wall p50 (s) | max (s) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for k in sorted(groups) + ["all"]:
        g = rows if k == "all" else groups[k]
        comp = [r["compiles"] for r in g if r["compiles"] is not None]
        wall = [r["seconds"] for r in g if r["seconds"] is not None]
        fmt = lambda v: "-" if v is None else (f"{v:.0f}" if isinstance(v, float) else str(v))  # noqa: E731
        out.append(f"| {k} | {len(g)} | {sum(r['planted'] == 'failed' for r in g)} | "
                   f"{sum(r['to_op'] for r in g)} | {fmt(percentile(comp, 50))} | {fmt(percentile(comp, 95))} | "
                   f"{fmt(max(comp) if comp else None)} | {fmt(percentile(wall, 50))} | {fmt(max(wall) if wall else None)} |")
    return "\n".join(out)


def summarize(args):
    programs = json.load(open(os.path.join(args.repo, "programs.json")))
    rows = [read_case(args.repo, args.testlogs, p) for p in programs]
    merged = {r["name"]: r for r in (json.load(open(args.results)).get("cases", []) if args.merge and os.path.exists(args.results) else [])}
    merged.update({r["name"]: r for r in rows})
    rows = sorted(merged.values(), key=lambda r: r["seed"])
    judged = [r for r in rows if not r["healthy"].startswith("AOTI fails")]
    comp = [r["compiles"] for r in judged if r["compiles"] is not None]
    results = {
        "programs": len(rows),
        "seeds": sorted(r["seed"] for r in rows),
        "planted": len(judged),
        "planted_failed": sum(r["planted"] == "failed" for r in judged),
        "reduced_to_op": sum(r["to_op"] for r in judged),
        "compiles_p50": percentile(comp, 50),
        "compiles_p95": percentile(comp, 95),
        "compiles_max": max(comp) if comp else None,
        "false_alarms": sum(r["healthy"] == "false alarm" for r in rows),
        "healthy_aoti_fails": sum(r["healthy"].startswith("AOTI fails") for r in rows),
        "healthy_run": sum(r["healthy"] != "not run" for r in rows),
        "ops_planted": sorted({r["op"] for r in rows}),
        "cases": rows,
    }
    with open(args.results, "w") as f:
        json.dump(results, f, indent=1)
    text = [f"{results['programs']} programs (seeds {min(results['seeds'])} to {max(results['seeds'])}), "
            f"{results['planted']} planted on a program AOTI compiles, {results['planted_failed']} planted failures caught, {results['reduced_to_op']} reduced to the planted op, "
            f"{results['false_alarms']} false alarms on {results['healthy_run']} healthy twins; "
            f"{results['healthy_aoti_fails']} healthy twins that AOTI itself fails (a real AOTI bug: their planted "
            "twins are left out of the tables)", ""]
    for key in ("class", "construct", "pattern", "place", "names"):
        text += [table(judged, key), ""]
    text += ["| program | construct | pattern | op | place | kind | names | healthy | planted | class | nodes | ops | compiles | wall (s) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | ---: | --- | ---: | ---: |"]
    for r in rows:
        text.append(f"| {r['name']} | {r['construct']} | {r['pattern']} | {r['op']} | {r['place']} | {r['kind']} | "
                    f"{'on' if r['names'] else 'off'} | {r['healthy']} | {r['planted']} | {r['got_class'] or '-'} | "
                    f"{r.get('nodes_before', '-')} → {r['nodes_after'] if r['nodes_after'] is not None else '-'} | "
                    f"{', '.join(r['ops']) or '-'} | {r['compiles'] if r['compiles'] is not None else '-'} | "
                    f"{round(r['seconds']) if r['seconds'] is not None else '-'} |")
    print("\n".join(text))
    if args.table:
        with open(args.table, "w") as f:
            f.write("\n".join(text) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--out", required=True)
    g.add_argument("--harness", required=True)
    g.add_argument("--seeds", required=True, help="A:B, the seeds A to B-1")
    s = sub.add_parser("summarize")
    s.add_argument("--repo", required=True)
    s.add_argument("--testlogs", required=True)
    s.add_argument("--results", required=True)
    s.add_argument("--merge", action="store_true", help="keep the cases of other seeds already in --results")
    s.add_argument("--table")
    args = ap.parse_args()
    generate(args) if args.cmd == "generate" else summarize(args)


if __name__ == "__main__":
    main()
