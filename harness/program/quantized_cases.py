#!/usr/bin/env python3
"""quantized_cases: the differential test's cases for the harness's native
quantized_decomposed operators (harness/program/quantized_ops.cc), each with the outputs of
torch's own Python definition of the operator in the installed wheel.

Random inputs: float32, float16 and bfloat16 values around and beyond the quantized range
(so clamping and ties of round-half-to-even are met), int8, uint8 and int16 targets,
per-tensor (float and tensor parameters), per-channel on every axis, per-token, and the
choice of parameters from a tensor's range.

Writes OUT.json (each case: the operator, its arguments, keyword arguments and the expected
outputs, tensors as dtype, sizes and byte offsets) and OUT.bin (the tensors' bytes). Run at
build time through @torch//:python, so the expected values come from the wheel the harness
is built against.

Usage: quantized_cases.py OUT_PREFIX [--count N] [--seed S]
"""
import argparse
import json
import random

import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  (defines torch.ops.quantized_decomposed)

QDTYPES = [torch.int8, torch.uint8, torch.int16]
FLOATS = [torch.float32, torch.float32, torch.float16, torch.bfloat16]


class Writer:
    def __init__(self):
        self.blob = bytearray()
        self.cases = []

    def tensor(self, t):
        t = t.detach().contiguous()
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        rec = {"dtype": str(t.dtype).replace("torch.", ""), "sizes": list(t.shape), "offset": len(self.blob),
               "bytes": len(raw)}
        self.blob += raw
        return {"tensor": rec}

    def value(self, v):
        if isinstance(v, torch.Tensor):
            return self.tensor(v)
        if isinstance(v, torch.dtype):
            return {"dtype": str(v).replace("torch.", "")}
        if v is None:
            return {"none": True}
        if isinstance(v, bool):
            raise TypeError("no bool arguments in these operators")
        if isinstance(v, int):
            return {"int": v}
        return {"float": float(v)}

    def case(self, op, overload, args, kwargs=None):
        packet = getattr(torch.ops.quantized_decomposed, op)
        fn = getattr(packet, overload or "default")
        out = fn(*args, **(kwargs or {}))
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        self.cases.append({"op": op, "overload": overload, "args": [self.value(a) for a in args],
                           "kwargs": {k: self.value(v) for k, v in (kwargs or {}).items()},
                           "outputs": [self.tensor(o) for o in outs]})


def bounds(dtype):
    info = torch.iinfo(dtype)
    return info.min, info.max


def floats(rng, shape, dtype, scale):
    # Values on the grid (ties of round half to even), off it, and beyond the range.
    t = torch.randn(shape, dtype=torch.float32) * scale * rng.choice([20, 100, 400])
    if rng.random() < 0.5:
        t = torch.round(t / scale * 2) / 2 * scale  # exact halves of a step
    return t.to(dtype)


def shape(rng):
    return rng.choice([(7,), (3, 5), (2, 3, 4), (2, 4, 3, 3)])


def one_case(w, rng):
    kind = rng.choice(["per_tensor", "per_tensor_t", "per_tensor_t2", "per_channel", "per_token", "choose",
                       "choose_token"])
    q = rng.choice(QDTYPES)
    lo, hi = bounds(q)
    if rng.random() < 0.3:  # a narrower range than the dtype's, as reduce_range gives
        lo, hi = lo // 2, hi // 2
    f = rng.choice(FLOATS)
    s = shape(rng)
    scale = rng.choice([0.01, 0.05, 0.1, 0.37, 1.0])
    zp = rng.randint(lo, hi) if q != torch.int16 else rng.randint(-100, 100)
    x = floats(rng, s, f, scale)
    if kind.startswith("per_tensor"):
        out_dtype = rng.choice([None, torch.float32, torch.bfloat16])
        kw = {} if out_dtype is None else {"out_dtype": out_dtype}
        if kind == "per_tensor":
            qargs = (scale, zp, lo, hi, q)
            overload = ""
        elif kind == "per_tensor_t":
            qargs = (torch.tensor(scale, dtype=torch.float64), torch.tensor(zp), lo, hi, q)
            overload = "tensor"
        else:
            qargs = (torch.tensor(scale), torch.tensor(zp), torch.tensor(lo), torch.tensor(hi), q)
            overload = "tensor2"
        w.case("quantize_per_tensor", overload, (x,) + qargs)
        xq = getattr(torch.ops.quantized_decomposed.quantize_per_tensor, overload or "default")(x, *qargs)
        w.case("dequantize_per_tensor", overload, (xq,) + qargs, kw)
    elif kind == "per_channel":
        axis = rng.randrange(len(s))
        n = s[axis]
        scales = torch.tensor([rng.choice([0.01, 0.05, 0.1, 0.37]) for _ in range(n)], dtype=torch.float32)
        zps = torch.tensor([rng.randint(lo, hi) if q != torch.int16 else 0 for _ in range(n)], dtype=torch.int64)
        if f != torch.float32:
            x = x.to(torch.float32)
        w.case("quantize_per_channel", "", (x, scales, zps, axis, lo, hi, q))
        xq = torch.ops.quantized_decomposed.quantize_per_channel(x, scales, zps, axis, lo, hi, q)
        out_dtype = rng.choice([None, torch.float32])
        kw = {} if out_dtype is None else {"out_dtype": out_dtype}
        w.case("dequantize_per_channel", "", (xq, scales, rng.choice([zps, None]), axis, lo, hi, q), kw)
    elif kind == "per_token":
        x = x.to(torch.float32)
        scales, zps = torch.ops.quantized_decomposed.choose_qparams_per_token_asymmetric(x, torch.int8)
        w.case("quantize_per_token", "", (x, scales, zps, -128, 127, torch.int8))
        xq = torch.ops.quantized_decomposed.quantize_per_token(x, scales, zps, -128, 127, torch.int8)
        w.case("dequantize_per_token", "", (xq, scales, zps, -128, 127, torch.int8, torch.float32))
    elif kind == "choose":
        x = x.to(torch.float32)
        if rng.random() < 0.2:
            x = x.abs()  # a range that does not hold 0
        q8 = rng.choice([torch.int8, torch.uint8])
        l8, h8 = bounds(q8)
        w.case("choose_qparams", "tensor", (x, l8, h8, rng.choice([1e-5, torch.finfo(torch.float32).eps]), q8))
    else:
        w.case("choose_qparams_per_token_asymmetric", "", (x.to(torch.float32), torch.int8))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=600)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    torch.manual_seed(a.seed)
    w = Writer()
    for _ in range(a.count):
        one_case(w, rng)
    with open(a.out + ".bin", "wb") as f:
        f.write(bytes(w.blob))
    with open(a.out + ".json", "w") as f:
        json.dump({"torch": torch.__version__, "cases": w.cases}, f)


if __name__ == "__main__":
    main()
