"""Several corpus programs as one model: each program's module runs on its own inputs, and
the bundle returns every program's outputs, by program name. AOTI compiles the bundle once
instead of once per program (each compile pays for the compiler's start and the wrapper's
headers), and the check still judges every output of every program.

make_model(programs="a,b,c") and example_inputs(programs="a,b,c"): the programs are model
files beside this one (given to aoti_package as data), each following the model file
contract without dynamic shapes or keyword inputs."""
import importlib.util
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def _load(name):
    path = os.path.join(HERE, name + ".py")
    spec = importlib.util.spec_from_file_location("aoti_corpus_" + name, path)
    module = importlib.util.module_from_spec(spec)
    # Importable by its name: torch.cond and while_loop trace through dynamo, whose guards
    # import the module that defines the branch functions.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    for fn in ("dynamic_shapes", "example_kwargs"):
        if callable(getattr(module, fn, None)):
            raise ValueError(f"bundle: {path} defines {fn}(); a bundled program takes positional inputs only")
    return module


def _names(programs):
    names = [p.strip() for p in programs.split(",") if p.strip()]
    if not names:
        raise ValueError("bundle: programs is empty; expected names of model files beside bundle.py, a,b,c")
    return names


class Bundle(torch.nn.Module):
    def __init__(self, names, counts):
        super().__init__()
        self.names = names
        self.counts = counts
        self.programs = torch.nn.ModuleList(_load(n).make_model() for n in names)

    def forward(self, *args):
        out, k = {}, 0
        for name, count, program in zip(self.names, self.counts, self.programs):
            out[name] = program(*args[k:k + count])
            k += count
        return out


def _inputs(names):
    per_program = []
    for n in names:
        args = _load(n).example_inputs()
        per_program.append(tuple(args) if isinstance(args, (tuple, list)) else (args,))
    return per_program


def make_model(programs=""):
    names = _names(programs)
    # Each program's inputs are counted once, to split the bundle's inputs among them.
    counts = [len(a) for a in _inputs(names)]
    return Bundle(names, counts)


def example_inputs(programs=""):
    return tuple(t for args in _inputs(_names(programs)) for t in args)
