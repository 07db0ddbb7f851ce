"""The model file's contract: load it, build the case (module, inputs), run eager and float64."""

import copy
import importlib.util
import os
import re
import sys

from aoti_aten_fallbacks import ContractError

from .common import log


def training_modules(model):
    """The submodules in training mode whose forward differs in eval mode, by type name."""
    kinds = {}
    for m in model.modules():
        name = type(m).__name__
        if m.training and ("Dropout" in name or "BatchNorm" in name or "InstanceNorm" in name):
            kinds[name] = kinds.get(name, 0) + 1
    return kinds


def set_mode(model, keep_mode):
    """AOTI serves models for inference: the module is exported in eval mode, unless the
    rule asks to keep the mode make_model() gave it (aoti_package's keep_mode). Either way
    the log says which mode was packaged and what eval mode changes."""
    import torch

    if not isinstance(model, torch.nn.Module):
        return
    kinds = training_modules(model)
    what = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "no dropout or normalization layer"
    if not model.training and not any(m.training for m in model.modules()):
        log("mode: eval, as make_model() returned it")
    elif keep_mode:
        log(f"mode: training, kept as make_model() returned it (keep_mode; {what} act as in training: dropout "
            "draws random numbers, batch norm uses the batch's statistics)")
    else:
        how = to_eval(model)
        log(f"mode: {how}: make_model() returned the module in training mode ({what}); the package "
            "is the module in eval mode, as it is served. Set keep_mode = True on aoti_package to package it as "
            "returned")


# Where a quantization library keeps its move of an exported module to eval mode, newest first.
MOVE_TO_EVAL = ("torchao.quantization.pt2e", "torchao.quantization.pt2e.utils", "torch.ao.quantization")


def to_eval(model):
    """The module in eval mode; what was called, in words. A module torch.export made (a
    PT2E-quantized model after convert_pt2e, an ExportedProgram's module()) refuses
    model.eval(); its quantization library's move_exported_model_to_eval does the same for
    it (dropout and batch norm in the graph switched to their eval forms)."""
    import importlib

    try:
        model.eval()
        return "model.eval() called"
    except NotImplementedError as e:
        if "move_exported_model_to" not in str(e):
            raise ContractError(f"make_model() returned a module whose eval() raised NotImplementedError: {e}; "
                                "return it in eval mode, or set keep_mode = True on aoti_package") from e
        refused = e
    for name in MOVE_TO_EVAL:
        try:
            fn = getattr(importlib.import_module(name), "move_exported_model_to_eval", None)
        except ImportError:
            continue
        if callable(fn):
            fn(model)
            return (f"{name}.move_exported_model_to_eval(model) called (the module is an exported graph, which "
                    "refuses model.eval())")
    raise ContractError(f"make_model() returned an exported graph module in training mode; it refuses model.eval() "
                        f"({refused}) and no quantization library here has move_exported_model_to_eval (looked in "
                        f"{', '.join(MOVE_TO_EVAL)}). Call it in make_model(), or set keep_mode = True on aoti_package")


# The name a model file is imported under (sys.modules).
MODEL_MODULE = "aoti_model_under_test"


def load_model_file(path):
    if not os.path.isfile(path):
        raise ContractError(f"model file {path!r} does not exist")
    # A model file may import modules beside it (given to aoti_package as data).
    model_dir = os.path.dirname(os.path.abspath(path))
    if model_dir not in sys.path:
        sys.path.insert(0, model_dir)
    spec = importlib.util.spec_from_file_location(MODEL_MODULE, path)
    module = importlib.util.module_from_spec(spec)
    # Importable by its name: torch.cond and while_loop run through dynamo even in eager,
    # and dynamo's guards import the module that defines the branch functions.
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # the user's file raised at import time
        del sys.modules[spec.name]
        raise ContractError(f"importing model file {path!r} raised {type(e).__name__}: {e}") from e
    for fn in ("make_model", "example_inputs"):
        if not callable(getattr(module, fn, None)):
            raise ContractError(
                f"model file {path!r} must define a function {fn}(); "
                "expected make_model() -> nn.Module and example_inputs() -> tuple")
    return module


DEVICE_RE = re.compile(r"^(cpu|cuda|xpu|mps|meta)(:[0-9]+)?$")


def check_device(device, what):
    """torch.device(device) when this process can place tensors there; else ContractError
    naming `what`, the device, and why."""
    import torch

    if not isinstance(device, str) or not DEVICE_RE.match(device):
        raise ContractError(f"{what}: {device!r} is not a device; expected cpu, cuda or cuda:N")
    d = torch.device(device)
    if d.type == "cuda":
        if not torch.cuda.is_available():
            why = ("this torch is a CPU-only build" if torch.version.cuda is None
                   else "no GPU is visible (CUDA_VISIBLE_DEVICES, the driver)")
            raise ContractError(f"{what}: {device!r}, and this process cannot use CUDA: {why} "
                                f"(torch {torch.__version__}); build CUDA packages on a GPU host with a CUDA torch")
        if d.index is not None and d.index >= torch.cuda.device_count():
            raise ContractError(f"{what}: {device!r}, and this host has {torch.cuda.device_count()} CUDA device(s)")
    elif d.type not in ("cpu",):
        raise ContractError(f"{what}: {device!r}: the harness runs on cpu and cuda only")
    return d


def on_recorded_device(t, rec, what):
    """t (read on the CPU by read_raw_tensor) on the device its record names."""
    device = rec.get("device") or "cpu"
    if device == "cpu":
        return t
    return t.to(check_device(device, f"{what} {rec.get('name', '')!r} was recorded on"))


def call_with_model_kwargs(fn, model_kwargs):
    """fn() or, when fn takes parameters named like model_kwargs' keys, fn(**those): a model
    file whose inputs depend on its configuration (make_model's keyword arguments) reads
    the same configuration in example_inputs."""
    import inspect

    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn()
    takes_any = any(p.kind == p.VAR_KEYWORD for p in params.values())
    given = {k: v for k, v in (model_kwargs or {}).items() if takes_any or k in params}
    return fn(**given)


def build_case(module, path, seed, model_kwargs=None, dtype=None, device=None):
    import torch

    torch.manual_seed(seed)
    try:
        model = module.make_model(**(model_kwargs or {}))
    except TypeError as e:
        if not model_kwargs:
            raise
        raise ContractError(f"{path}: make_model(**{model_kwargs!r}) raised TypeError: {e}; "
                            "model_kwargs must name make_model's keyword parameters") from e
    if not isinstance(model, torch.nn.Module):
        raise ContractError(f"{path}: make_model() returned {type(model).__name__}, expected torch.nn.Module")
    torch.manual_seed(seed + 1)
    args = call_with_model_kwargs(module.example_inputs, model_kwargs)
    if isinstance(args, torch.Tensor):
        args = (args,)
    if not isinstance(args, (tuple, list)):
        raise ContractError(f"{path}: example_inputs() returned {type(args).__name__}, expected a tuple of inputs")
    kwargs = module.example_kwargs() if callable(getattr(module, "example_kwargs", None)) else {}
    if not isinstance(kwargs, dict):
        raise ContractError(f"{path}: example_kwargs() returned {type(kwargs).__name__}, expected a dict")
    dyn = module.dynamic_shapes() if callable(getattr(module, "dynamic_shapes", None)) else None
    if dtype is not None:
        # The whole model and its floating inputs in one dtype (e.g. a bfloat16 variant).
        model = model.to(dtype)
        cast = lambda t: t.to(dtype) if isinstance(t, torch.Tensor) and t.is_floating_point() else t
        args = [cast(a) for a in args]
        kwargs = {k: cast(v) for k, v in kwargs.items()}
    if device is not None:
        # The model and its tensor inputs on the package's device (its weights, buffers).
        model = model.to(device)
        move = lambda t: t.to(device) if isinstance(t, torch.Tensor) else t
        args = [move(a) for a in args]
        kwargs = {k: move(v) for k, v in kwargs.items()}
    return model, tuple(args), kwargs, dyn


SHAPE_NAME_RE = re.compile(r"^[A-Za-z0-9_]+$")


def shape_inputs(module, path, model_kwargs=None, dtype=None, device=None):
    """The model file's own inputs per shape point: shape_inputs() -> {name: inputs}, each value
    a tuple of positional inputs (as example_inputs() returns) or an (args, kwargs) pair; None
    when the file defines none. A name the harness plans itself ("min", "max", "distinct",
    "large") replaces the inputs the harness would make there; another name adds a point.
    They are made after torch.manual_seed(seed + 2) (reproducible) and cast and moved as the
    sample inputs are."""
    import torch

    fn = getattr(module, "shape_inputs", None)
    if fn is None:
        return None
    if not callable(fn):
        raise ContractError(f"{path}: shape_inputs must be a function returning {{name: inputs}}")
    points = call_with_model_kwargs(fn, model_kwargs)
    if not isinstance(points, dict) or not points:
        raise ContractError(f"{path}: shape_inputs() returned {type(points).__name__}"
                            f"{' (empty)' if isinstance(points, dict) else ''}, expected a non-empty dict "
                            "{name: tuple of inputs}")
    cast = (lambda t: t.to(dtype) if isinstance(t, torch.Tensor) and t.is_floating_point() else t) if dtype else None
    move = (lambda t: t.to(device) if isinstance(t, torch.Tensor) else t) if device else None
    out = {}
    for name, value in points.items():
        if not isinstance(name, str) or not SHAPE_NAME_RE.match(name):
            raise ContractError(f"{path}: shape_inputs() names a point {name!r}; a name is letters, digits "
                                "and '_' (it names the test AotiModelShapes.<name>)")
        if isinstance(value, torch.Tensor):
            value = (value,)
        if (isinstance(value, (tuple, list)) and len(value) == 2 and isinstance(value[0], (tuple, list))
                and isinstance(value[1], dict)):
            args, kwargs = tuple(value[0]), dict(value[1])
        elif isinstance(value, (tuple, list)):
            args, kwargs = tuple(value), {}
        else:
            raise ContractError(f"{path}: shape_inputs()[{name!r}] is a {type(value).__name__}, expected a tuple "
                                "of inputs or an (args, kwargs) pair")
        for f in (cast, move):
            if f is not None:
                args, kwargs = tuple(f(a) for a in args), {k: f(v) for k, v in kwargs.items()}
        out[name] = (args, kwargs)
    return out


def eager_fp64(model, args, kwargs):
    """The model and its floating inputs in float64, run eagerly: a reference for tests.

    Returns None when the model cannot run in float64 (the manifest then has no fp64 outputs).
    """
    import torch
    import torch.utils._pytree as pytree

    def promote(t):
        return t.to(torch.float64) if isinstance(t, torch.Tensor) and t.is_floating_point() else t

    try:
        with torch.no_grad():
            m64 = copy.deepcopy(model).to(torch.float64)
            out = m64(*pytree.tree_map(promote, copy.deepcopy(args)), **pytree.tree_map(promote, copy.deepcopy(kwargs)))
        return pytree.tree_leaves(out)
    except Exception as e:  # a model with fixed-dtype internals may refuse float64
        log(f"no float64 eager reference: {type(e).__name__}: {e}")
        return None


def run_eager(model, ex_args, ex_kwargs, source):
    """Eager's flat outputs, and float64's (None when the model refuses float64)."""
    import torch
    import torch.utils._pytree as pytree

    log(f"eager run of {source}")
    with torch.no_grad():
        try:
            # On a copy: a model that mutates its buffers must be exported as it was.
            eager_out = copy.deepcopy(model)(*copy.deepcopy(ex_args), **copy.deepcopy(ex_kwargs))
        except Exception as e:
            raise ContractError(f"{source}: eager run raised {type(e).__name__}: {e}") from e
    return pytree.tree_leaves(eager_out), eager_fp64(model, ex_args, ex_kwargs)


def flat_inputs(ep, ex_args, ex_kwargs):
    """The inputs in the order the program takes them: keyword inputs in its call spec's
    order (an inputs file may list them in another), else the order given."""
    import torch.utils._pytree as pytree

    try:
        import torch.fx._pytree as fx_pytree

        return list(fx_pytree.tree_flatten_spec((tuple(ex_args), dict(ex_kwargs)), ep.call_spec.in_spec))
    except Exception:
        return pytree.tree_leaves((ex_args, ex_kwargs))


def read_inputs_file(path, what):
    """(args, kwargs) from an inputs file: a Python file with example_inputs() (and
    example_kwargs()), or a torch.save file of a tensor, a tuple or list of tensors, a dict of
    keyword tensors, or an (args, kwargs) pair."""
    import torch

    if not os.path.isfile(path):
        raise ContractError(f"{what} {path!r} does not exist")
    if path.endswith(".py"):
        spec = importlib.util.spec_from_file_location("aoti_inputs_file", path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            raise ContractError(f"{what} {path!r}: importing it raised {type(e).__name__}: {e}") from e
        if not callable(getattr(module, "example_inputs", None)):
            raise ContractError(f"{what} {path!r} must define example_inputs() -> tuple of inputs "
                                "(and may define example_kwargs() -> dict)")
        args = module.example_inputs()
        kwargs = module.example_kwargs() if callable(getattr(module, "example_kwargs", None)) else {}
        obj = (tuple(args) if isinstance(args, (tuple, list)) else (args,), kwargs)
    else:
        try:
            obj = torch.load(path, weights_only=True)
        except Exception as e:
            raise ContractError(f"{what} {path!r}: torch.load failed ({type(e).__name__}: {e}); expected a file "
                                "torch.save wrote, or a Python file with example_inputs()") from e
    if isinstance(obj, torch.Tensor):
        return (obj,), {}
    if isinstance(obj, dict):
        return (), obj
    if (isinstance(obj, (tuple, list)) and len(obj) == 2 and isinstance(obj[0], (tuple, list))
            and isinstance(obj[1], dict)):
        return tuple(obj[0]), obj[1]
    if isinstance(obj, (tuple, list)):
        return tuple(obj), {}
    raise ContractError(f"{what} {path!r} holds a {type(obj).__name__}; expected a tensor, a tuple of tensors, a "
                        "dict of keyword tensors, or an (args, kwargs) pair")
