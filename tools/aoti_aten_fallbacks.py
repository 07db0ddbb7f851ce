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
ATEN_FALLBACKS = "aoti_harness.aten_fallbacks"
SKIP_DECOMPOSITIONS = "aoti_harness.skip_decompositions"
HARNESS_KEYS = (ATEN_FALLBACKS, SKIP_DECOMPOSITIONS)


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
    if fallbacks or undecomposed:
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
