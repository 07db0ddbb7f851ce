#!/usr/bin/env python3
"""torch_probe.py: what one torch install is, as JSON on stdout's last line.

    python torch_probe.py [--config]

Prints {"python", "version", "git_version", "cuda", "cxx11_abi"} and, with --config,
"inductor_config": inductor's configuration as this torch sets it by default (every key of
torch._inductor.config, nested ones dotted, values that are not JSON written as their repr).
Used by tools/torch_matrix.sh (what differs between the torches of the matrix) and by
`aoti_reduce bisect-torch` (the configuration that differs between the newest torch that
passes a repro and the oldest that fails it). Nothing is compiled.
"""
import json
import sys
import warnings

warnings.filterwarnings("ignore")


def jsonable(value):
    """value as JSON; a path inside this install written relative to it (the same default in
    two virtualenvs is not a difference)."""
    if isinstance(value, str):
        return value.replace(sys.prefix, "<venv>")
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (list, tuple)) and all(v is None or isinstance(v, (bool, int, float, str)) for v in value):
        return [jsonable(v) for v in value]
    return jsonable(repr(value))


def inductor_config():
    from torch._inductor import config

    copy = config.get_config_copy()
    return {key: jsonable(copy[key]) for key in sorted(copy)}


def main(argv):
    if any(a not in ("--config",) for a in argv):
        print(f"torch_probe.py: unknown argument(s) {argv}; expected --config or nothing", file=sys.stderr)
        return 2
    import torch

    info = {
        "python": sys.executable,
        "version": torch.__version__,
        "git_version": getattr(torch.version, "git_version", "unknown"),
        "cuda": torch.version.cuda,
        "cxx11_abi": bool(torch._C._GLIBCXX_USE_CXX11_ABI),
    }
    if "--config" in argv:
        info["inductor_config"] = inductor_config()
    print(json.dumps(info, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
