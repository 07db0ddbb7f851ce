"""aoti_aten_fallbacks: the one implementation of the harness's own inductor_configs keys,
used by the packager (tools/package_model.py), the compile server, every repro.py (a copy of
this file beside it) and every workaround.md (which names it), so what a workaround says is
what was verified.

    from aoti_aten_fallbacks import AtenFallbacks, split_configs

    inductor_configs, fallbacks, undecomposed = split_configs(configs)
    with AtenFallbacks(fallbacks, undecomposed):
        torch._inductor.aoti_compile_and_package(ep, package_path=..., inductor_configs=inductor_configs)

split_configs also sets force_disable_caches where operators fall back or lose their
decompositions: inductor's caches do not know of either, and a warm cache would hand back
the compile without them (the buggy kernel).

A planted bug (tests only; aoti_harness.plant_bug_TESTING_ONLY) is applied the same way:

    with AtenFallbacks(fallbacks, undecomposed), PlantedBug.from_configs(configs):
        ...
"""
import json


class ContractError(Exception):
    """The model file, or its configuration, does not follow the documented contract."""


def parse_config_value(text):
    """Config values arrive as strings from Bazel: JSON literals become typed values."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


# The inductor_configs keys the harness reads itself and never passes to inductor:
#   aoti_harness.aten_fallbacks: ATen operators inductor must call as they are (an ATen
#     fallback) instead of decomposing, lowering and generating code for them; a workaround
#     for a compiler bug in one operator;
#   aoti_harness.skip_decompositions: operators whose inductor decomposition is left out
#     (they are lowered as they are); the reducer's stage ladder uses it.
#   aoti_harness.plant_bug_TESTING_ONLY: a bug planted in inductor's C++ code for one of its
#     pointwise ops, for the harness's own tests and benchmarks (PlantedBug below).
ATEN_FALLBACKS = "aoti_harness.aten_fallbacks"
SKIP_DECOMPOSITIONS = "aoti_harness.skip_decompositions"
PLANT_BUG = "aoti_harness.plant_bug_TESTING_ONLY"
HARNESS_KEYS = (ATEN_FALLBACKS, SKIP_DECOMPOSITIONS, PLANT_BUG)


def operators(configs, key):
    """The operators configs[key] names (a JSON list of names). ContractError naming the key."""
    import torch

    names = parse_config_value(configs.get(key, []))
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ContractError(f"inductor_configs[{key!r}] = {configs[key]!r}: expected a JSON list "
                            'of ATen operator names, e.g. ["aten.relu.default"]')
    ops = []
    for name in names:
        parts = name.split(".")
        op = torch.ops
        try:
            for part in parts:
                op = getattr(op, part)
        except (AttributeError, RuntimeError):
            op = None
        if len(parts) not in (2, 3) or not isinstance(op, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
            raise ContractError(f"inductor_configs[{key!r}]: {name!r} is not an operator; expected "
                                "<namespace>.<op>[.<overload>], e.g. aten.relu.default")
        ops.append(op)
    return ops


def overloads(op):
    return [getattr(op, name) for name in op.overloads()] if hasattr(op, "overloads") else [op]


def split_configs(configs):
    """(the configs for inductor, the operators to fall back to ATen, the operators whose
    decomposition is left out). ContractError naming the key when an aoti_harness.* key is
    unknown, its value is not a list of operator names, or an operator to skip the
    decomposition of has none."""
    inductor = {k: v for k, v in configs.items() if not k.startswith("aoti_harness.")}
    unknown = sorted(k for k in configs if k.startswith("aoti_harness.") and k not in HARNESS_KEYS)
    if unknown:
        raise ContractError(f"inductor_configs {unknown}: unknown harness key(s); the harness reads {list(HARNESS_KEYS)}")
    fallbacks, undecomposed = operators(configs, ATEN_FALLBACKS), operators(configs, SKIP_DECOMPOSITIONS)
    if undecomposed:
        from torch._inductor.decomposition import select_decomp_table

        table = select_decomp_table()
        for op in undecomposed:
            if not any(o in table for o in overloads(op)):
                raise ContractError(f"inductor_configs[{SKIP_DECOMPOSITIONS!r}]: {op} has no decomposition in inductor's "
                                    "table: no decomposition to leave out")
    planted = PlantedBug.from_configs(configs)  # a malformed plant is a ContractError here
    if fallbacks or undecomposed or planted.op:
        # Inductor's caches do not know about these: a cached compile of the same graph
        # without them must not be reused.
        inductor["force_disable_caches"] = True
    return inductor, fallbacks, undecomposed


class AtenFallbacks:
    """For one compile, `fallbacks` are called as ATen kernels (inductor's make_fallback,
    their decompositions left out) and `undecomposed` lose their decompositions only;
    inductor's tables are restored afterwards, so the next compile in the same process (the
    compile server's) is unaffected."""

    def __init__(self, fallbacks, undecomposed=()):
        self.fallbacks, self.undecomposed = list(fallbacks), list(undecomposed)

    def __enter__(self):
        if not (self.fallbacks or self.undecomposed):
            return self
        from torch._inductor import decomposition, lowering

        self.saved = [(table, table.copy()) for table in (
            lowering.lowerings, lowering.fallbacks, lowering.needs_realized_inputs, lowering._maybe_layout_constraints,
            decomposition.decompositions)]
        for op in self.fallbacks + self.undecomposed:
            for overload in overloads(op):
                decomposition.decompositions.pop(overload, None)
        for op in self.fallbacks:
            lowering.make_fallback(op, warn=False, override_decomp=True)
        decomposition.fast_random_decomps.cache_clear()
        return self

    def __exit__(self, *exc):
        if not (self.fallbacks or self.undecomposed):
            return False
        from torch._inductor import decomposition

        for table, saved in self.saved:
            table.clear()
            table.update(saved)
        decomposition.fast_random_decomps.cache_clear()
        return False


# What each kind of planted bug makes of the C++ expression inductor wrote for the op (E),
# in the statement `auto tmpN = E;` of a kernel's loop body, scalar or vectorized:
#   compile_error   not C++: the kernel does not compile
#   runtime_error   throws after computing it (one thread: an error the caller sees; inside
#                   an OpenMP region: the process ends, a signal)
#   signal          a trap instruction (SIGILL)
#   out_of_bounds   a read of the address 4 MiB above 0 (SIGSEGV)
#   accuracy        E + 1: a gross error
#   drift           E * (1 + amount), amount 0.01 unless given: a small relative error
#   nan             E + NaN
PLANT_KINDS = {
    "compile_error": lambda e, amount: "compile error!",
    "runtime_error": lambda e, amount: f"{e}; throw 1",
    "signal": lambda e, amount: f"{e}; __builtin_trap()",
    "out_of_bounds": lambda e, amount: f"({e}) + decltype({e})(((volatile float*)nullptr)[1 << 20])",
    "accuracy": lambda e, amount: f"({e}) + decltype({e})(1)",
    "drift": lambda e, amount: f"({e}) * decltype({e})({1.0 + amount!r})",
    "nan": lambda e, amount: f"({e}) + decltype({e})(NAN)",
}


class PlantedBug:
    """For one compile, inductor's C++ code for one pointwise op is wrong in a chosen way: a
    test-only bug for any op (inductor's own hooks plant one in relu or log1p only). The
    value of aoti_harness.plant_bug_TESTING_ONLY, a JSON object:

        {"op": "sin", "kind": "drift", "amount": 0.001}

    op: an op of inductor's C++ code generator (torch._inductor.codegen.cpp.CppOverrides: the
    ATen operators that lower to it, aten.sin.default here, all get the bug); kind: a key of
    PLANT_KINDS; amount: drift's relative error. Both the scalar and the vectorized code
    get it. The code generator's classes are put back when the compile ends."""

    def __init__(self, op=None, kind=None, amount=0.01):
        self.op, self.kind, self.amount = op, kind, amount
        self.saved = []

    @classmethod
    def from_configs(cls, configs):
        """The plant configs hold (an inactive one when none). ContractError naming the key."""
        if PLANT_BUG not in configs:
            return cls()
        spec = parse_config_value(configs[PLANT_BUG])
        expected = (f'expected a JSON object {{"op": <an op of inductor\'s CppOverrides>, "kind": one of '
                    f'{sorted(PLANT_KINDS)}[, "amount": <drift\'s relative error>]}}')
        if not isinstance(spec, dict) or set(spec) - {"op", "kind", "amount"}:
            raise ContractError(f"inductor_configs[{PLANT_BUG!r}] = {configs[PLANT_BUG]!r}: {expected}")
        op, kind, amount = spec.get("op"), spec.get("kind"), spec.get("amount", 0.01)
        if kind not in PLANT_KINDS:
            raise ContractError(f"inductor_configs[{PLANT_BUG!r}]: kind {kind!r} is not one of {sorted(PLANT_KINDS)}")
        if not isinstance(amount, (int, float)) or isinstance(amount, bool) or not amount > 0:
            raise ContractError(f"inductor_configs[{PLANT_BUG!r}]: amount {amount!r}: expected a number above 0")
        from torch._inductor.codegen.cpp import CppOverrides

        if not isinstance(op, str) or op.startswith("_") or not callable(getattr(CppOverrides, op, None)):
            raise ContractError(f"inductor_configs[{PLANT_BUG!r}]: op {op!r} is not an op of inductor's C++ code "
                                "generator (torch._inductor.codegen.cpp.CppOverrides), e.g. \"sin\", \"add\"")
        return cls(op, kind, float(amount))

    def __enter__(self):
        if not self.op:
            return self
        from torch._inductor.codegen.cpp import CppOverrides, CppVecOverrides

        transform = PLANT_KINDS[self.kind]
        for cls in (CppOverrides, CppVecOverrides):
            if cls is CppVecOverrides and self.op not in vars(cls):
                continue  # the vectorized code calls the scalar one, planted already
            original = getattr(cls, self.op)
            self.saved.append((cls, vars(cls).get(self.op)))

            def planted(*args, _original=original, **kwargs):
                return transform(str(_original(*args, **kwargs)), self.amount)

            # CppVecOverrides wraps its static methods by name when a kernel makes one, and
            # falls back to the scalar op of the same name.
            planted.__name__ = planted.__qualname__ = self.op
            setattr(cls, self.op, staticmethod(planted))
        return self

    def __exit__(self, *exc):
        for cls, saved in reversed(self.saved):
            if saved is None:
                delattr(cls, self.op)
            else:
                setattr(cls, self.op, saved)
        self.saved = []
        return False
