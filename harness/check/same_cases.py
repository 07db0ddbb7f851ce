#!/usr/bin/env python3
"""same_cases: the differential test's cases for the accuracy rule, each judged by the
installed wheel's own torch._dynamo.utils.same, called as same_two_models calls it
(equal_nan=True, tol, ignore_non_fp).

Writes OUT.json (one record per case: the tensors' dtype, sizes and byte offsets, tol,
ignore_non_fp, and the verdict) and OUT.bin (the tensors' contiguous bytes). Run at build
time through @torch//:python (matchers/BUILD.bazel), so the table always comes from the
wheel the harness is built against.

With --judge TEMPLATE (reducer/repro/repro_template.py), each case is also judged by
repro.py's own rule (its judge()) under every accuracy mode the harness has: fp64 (with and
without exact_non_fp), strict, assert_close with the dtype's defaults and with the test's
own rtol and atol. //reducer:repro_rule_differential_test holds the C++ rule to the same
verdicts. Three kinds of case are added for it: outputs at assert_close's rtol (where the
side rtol scales decides), eager far from float64 (the unreliable reference), and a float64
run's output the program itself cast to the output's dtype (judged by the RMSE bound on it,
where upstream's same() has no reference).

Usage: same_cases.py OUT_PREFIX [--count N] [--seed S] [--judge TEMPLATE]
"""
import argparse
import json
import logging
import random
import sys

import torch
from torch._dynamo.utils import same

FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
KINDS = FLOATS * 3 + [torch.complex64, torch.int64, torch.int32, torch.bool]
TOLS = [1e-4, 1e-3, 1e-3, 1e-2, 2e-2, 5e-2]


def shape_for(rng):
    # Mostly small; about one in eight around upstream's numel < 1000 boundary.
    numel = rng.choice([1, 3, 16, 100, 250]) if rng.random() < 0.88 else rng.choice([999, 1000, 1001, 1024])
    if rng.random() < 0.15:  # 4-D with trailing 1x1 (upstream's larger multiplier)
        a = rng.choice([1, 2, 4])
        return (a, max(1, numel // a), 1, 1)
    if numel % 4 == 0 and rng.random() < 0.5:
        return (4, numel // 4)
    return (numel,)


def sprinkle(rng, t, what):
    """NaN or Inf at a few places, sometimes."""
    if not t.is_floating_point() and not t.is_complex():
        return t
    if rng.random() < 0.12:
        t = t.clone()
        flat = t.view(-1)
        for _ in range(rng.choice([1, 1, 2, 5])):
            flat[rng.randrange(flat.numel())] = rng.choice([float("nan"), float("nan"), float("inf"), -float("inf")])
    return t


def float_case(rng, dtype, shape, tol):
    scale = rng.choice([1e-3, 1.0, 1.0, 1e3])
    fp64 = torch.randn(shape, dtype=torch.float64) * scale
    # Eager's error, then compiled's as a multiple of it near the bounds (2, 3) or far.
    e_noise = torch.randn(shape, dtype=torch.float64) * scale * rng.choice([0, 1e-6, 1e-4, 1e-3, 1e-2])
    k = rng.choice([0.0, 0.5, 1.0, 1.9, 2.0, 2.1, 2.9, 3.0, 3.1, 5.0, 50.0])
    c_noise = e_noise * k + torch.randn(shape, dtype=torch.float64) * scale * rng.choice([0, 0, 1e-5, tol / 10, tol])
    ref = (fp64 + e_noise).to(dtype)
    res = (fp64 + c_noise).to(dtype)
    if rng.random() < 0.3:  # compiled equals eager but for a few elements
        res = ref.clone()
        flat = res.view(-1)
        for _ in range(rng.choice([1, 3])):
            i = rng.randrange(flat.numel())
            flat[i] = flat[i] * (1 + rng.choice([-1, 1]) * rng.choice([tol / 2, tol, 2 * tol, 10 * tol]))
    fp64_ref = None if rng.random() < 0.05 else sprinkle(rng, fp64, "fp64")
    return sprinkle(rng, ref, "ref"), sprinkle(rng, res, "res"), fp64_ref


def complex_case(rng, shape, tol):
    fp64 = torch.randn(shape, dtype=torch.complex128)
    ref = (fp64 + torch.randn(shape, dtype=torch.complex128) * rng.choice([0, 1e-6, 1e-3])).to(torch.complex64)
    res = (fp64 + torch.randn(shape, dtype=torch.complex128) * rng.choice([0, 1e-6, 1e-3, 1e-1])).to(torch.complex64)
    return sprinkle(rng, ref, "ref"), sprinkle(rng, res, "res"), fp64


def int_case(rng, dtype, shape):
    hi = rng.choice([2, 100, 100000])
    ref = torch.randint(-hi, hi, shape, dtype=dtype)
    res = ref.clone()
    if rng.random() < 0.6:
        flat = res.view(-1)
        for _ in range(rng.choice([1, 2, 10])):
            i = rng.randrange(flat.numel())
            flat[i] += rng.choice([-1, 1]) * rng.choice([1, 2, 50, 1000])
    return ref, res, ref.clone()  # the float64 run leaves integers as they are


def bool_case(rng, shape):
    ref = torch.rand(shape) < 0.5
    res = ref.clone()
    if rng.random() < 0.5:
        flat = res.view(-1)
        flat[rng.randrange(flat.numel())] ^= True
    return ref, res, ref.clone()


def near_rtol_case(rng, dtype, shape):
    """Compiled off eager by about assert_close's default rtol, at a scale where atol does
    not matter: the verdict turns on whether rtol scales |eager| or |compiled|."""
    from torch.testing._comparison import default_tolerances
    ref = ((torch.rand(shape, dtype=torch.float64) + 1) * 1e4 * rng.choice([1, -1])).to(dtype)
    rtol = default_tolerances(ref)[0]
    k = rng.choice([0.9, 0.99, 1.0, 1.01, 1.1, 0.5, 2.0])
    res = (ref.to(torch.float64) * (1 + k * rtol * rng.choice([1, -1]))).to(dtype)
    return ref, res, ref.to(torch.float64)


def unreliable_case(rng, dtype, shape):
    """Eager far from float64 (tens of percent), compiled within or beyond the RMSE bound."""
    fp64 = torch.randn(shape, dtype=torch.float64)
    ref = (fp64 + torch.randn(shape, dtype=torch.float64) * rng.choice([0.05, 0.3, 1.0])).to(dtype)
    res = (fp64 + torch.randn(shape, dtype=torch.float64) * rng.choice([0.05, 0.3, 0.6, 2.0])).to(dtype)
    return ref, res, fp64


def judge_variants(tol, ignore_non_fp):
    """The accuracy options repro.py's rule is asked under, by name."""
    return {
        "fp64": {"mode": "fp64", "tolerance": tol, "ignore_non_fp": ignore_non_fp},
        "fp64_exact_non_fp": {"mode": "fp64", "tolerance": tol, "ignore_non_fp": ignore_non_fp, "exact_non_fp": True},
        "strict": {"mode": "strict", "tolerance": tol, "ignore_non_fp": ignore_non_fp},
        "assert_close": {"mode": "assert_close", "tolerance": tol, "ignore_non_fp": ignore_non_fp},
        "assert_close_own": {"mode": "assert_close", "tolerance": tol, "ignore_non_fp": ignore_non_fp,
                             "rtol": tol, "atol": tol / 10},
        "sqnr": {"mode": "sqnr", "tolerance": tol, "ignore_non_fp": ignore_non_fp, "min_sqnr_db": 30.0},
        "sqnr_low": {"mode": "sqnr", "tolerance": tol, "ignore_non_fp": ignore_non_fp, "min_sqnr_db": 8.0},
    }


def load_judge(path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("repro_template", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.judge


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--count", type=int, default=12000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--judge", help="repro.py's template: record its rule's verdicts too")
    args = p.parse_args(argv)
    judge = load_judge(args.judge) if args.judge else None
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)  # same()'s NaN warnings
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    blob = bytearray()

    def put(t):
        if t is None:
            return None
        c = t.contiguous()
        raw = c.view(torch.uint8).numpy().tobytes() if c.numel() else b""
        rec = {"dtype": str(c.dtype).replace("torch.", ""), "sizes": list(c.shape), "offset": len(blob),
               "bytes": len(raw)}
        blob.extend(raw)
        return rec

    cases = []
    for n in range(args.count):
        kind = rng.choice(KINDS)
        shape = shape_for(rng)
        tol = rng.choice(TOLS)
        special = rng.random() if judge else 1.0
        if special < 0.08:
            ref, res, fp64 = near_rtol_case(rng, rng.choice(FLOATS), shape)
        elif special < 0.14:
            ref, res, fp64 = unreliable_case(rng, rng.choice([torch.float32, torch.float32, torch.bfloat16]), shape)
        elif special < 0.20:
            # The float64 run's output cast by the program itself to the output's dtype (a
            # .float() after an autocast region): still the reference, for both rules.
            dtype = rng.choice([torch.float32, torch.float16, torch.bfloat16])
            ref, res, fp64 = float_case(rng, dtype, shape, tol)
            fp64 = None if fp64 is None else fp64.to(dtype)
        elif kind in FLOATS:
            ref, res, fp64 = float_case(rng, kind, shape, tol)
        elif kind == torch.complex64:
            ref, res, fp64 = complex_case(rng, shape, tol)
        elif kind == torch.bool:
            ref, res, fp64 = bool_case(rng, shape)
        else:
            ref, res, fp64 = int_case(rng, kind, shape)
        if rng.random() < 0.01:  # a compiled output of another dtype
            res = res.to(torch.complex128 if res.is_complex() else torch.float64 if res.dtype != torch.float64 else torch.float32)
        ignore_non_fp = rng.random() < 0.25
        try:
            verdict = bool(same(ref, res, fp64, tol=tol, equal_nan=True, ignore_non_fp=ignore_non_fp,
                                log_error=lambda *a, **k: None))
            raised = ""
        except Exception as e:  # recorded: our rule must then fail the output
            verdict, raised = False, f"{type(e).__name__}: {e}"
        record = {"ref": put(ref), "res": put(res), "fp64": put(fp64), "tol": tol,
                  "ignore_non_fp": ignore_non_fp, "same": verdict, "raised": raised}
        if judge:
            record["repro"] = {}
            for name, accuracy in judge_variants(tol, ignore_non_fp).items():
                try:
                    record["repro"][name] = judge(ref, res, fp64, accuracy)[0]
                except Exception as e:  # recorded: the C++ rule must then fail the output too
                    record["repro"][name] = f"raised {type(e).__name__}: {e}"
        cases.append(record)
    with open(args.out + ".bin", "wb") as f:
        f.write(bytes(blob))
    with open(args.out + ".json", "w") as f:
        json.dump({"torch": torch.__version__, "seed": args.seed, "cases": cases}, f)
    passed = sum(c["same"] for c in cases)
    print(f"same_cases: {len(cases)} cases ({passed} pass upstream's same(), "
          f"{sum(bool(c['raised']) for c in cases)} raise)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
