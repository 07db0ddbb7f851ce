"""The build key: refuse to package on a host whose CPU ISA differs from the one the build was
keyed on.
"""

import json

from aoti_aten_fallbacks import ContractError


# The CPU flags the build key holds (tools/repositories.bzl picks the same ones): what
# AOTI's generated kernels are compiled for.
def host_isa_flags(cpuinfo="/proc/cpuinfo"):
    with open(cpuinfo) as f:
        for line in f:
            if line.startswith("flags"):
                have = line.split(":", 1)[1].split()
                return sorted(f for f in have if f.startswith(("avx", "amx")) or f in ("sse4_2", "fma", "f16c"))
    return []


def check_build_key(path, cpuinfo="/proc/cpuinfo"):
    """This action's host against the build key it is cached under. The key is made where
    Bazel runs (the client); on a remote executor the action compiles for the executor's
    CPU, so a package built there for other vector extensions would be cached, and shared,
    under the client's key. Refused here instead, naming both."""
    try:
        with open(path) as f:
            key = json.load(f)
    except (OSError, ValueError) as e:
        raise ContractError(f"--build-key {path}: not a readable build key ({e})")
    want, have = key.get("cpu_isa_flags", []), host_isa_flags(cpuinfo)
    if sorted(want) != have:
        missing, extra = sorted(set(want) - set(have)), sorted(set(have) - set(want))
        raise ContractError(
            f"this action runs on a host whose CPU vector extensions differ from the build key's ({path}): "
            f"the key has {' '.join(missing) or 'nothing'} that this host lacks, and this host has "
            f"{' '.join(extra) or 'nothing'} that the key lacks. The package would be compiled for this host "
            "and cached under the client's key. Run AOTI packaging on executors of the client's ISA (a platform "
            "property; docs/ci.md, 'Remote execution'), or build locally (tags = [\"no-remote-exec\"]).")
