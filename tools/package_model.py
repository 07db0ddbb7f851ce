#!/usr/bin/env python3
"""package_model: export a PyTorch model, AOTI-compile it, and write one .pt2 archive.

The archive holds everything a harness test needs:
  models/<name>.json, data/weights/..., data/constants/...   the torch.export program
  data/sample_inputs/<name>.pt                              upstream's sample inputs
  data/aotinductor/<name>/...                               the AOTI-compiled model
  extra/aoti_harness/package.json                           what was done, and how it went
  aoti_harness/tensors/{input,eager,eager_fp64}_<i>.bin     flat inputs, eager outputs (raw)

With --prebuilt, the package is one a team shipped (aoti_compile_and_package's .pt2): its
compiled model is copied as it is, never recompiled; the exported program comes from the
same archive or --exported-program (torch.export.save), the inputs from --inputs (a
torch.save file, a Python file with example_inputs()) or the program's example inputs, and
the manifest records where each came from and the shipped file's sha256.

A compile failure does not fail this tool: the archive then records the failure (type,
message, compiler output) instead of holding data/aotinductor/, so the test can report it
and the reducer can work on it. Errors in the model file itself (bad contract, eager run
raises) do fail, with a message naming the file. A torch.export failure is recorded in the
archive (compile status "export_error", no program), as a compile failure is, so that the
model's test fails with the export's error and a diagnosis.

The model file contract (see README.md, "Model file contract"):
  make_model(**model_kwargs) -> torch.nn.Module required (--model-kwargs; none by default)
  example_inputs() -> tuple of positional args   required
  example_kwargs() -> dict                       optional
  dynamic_shapes() -> dynamic_shapes for export  optional
Both make_model and example_inputs run after torch.manual_seed(--seed). With --device
(cuda, cuda:1), the model and its tensor inputs are moved there before the eager run and
the export, so the package is compiled for that device; each input's device is recorded.
"""

import argparse
import copy
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import time
import traceback
import warnings

# The harness's own inductor_configs keys (ATen fallbacks, skipped decompositions): one
# implementation, beside this file, shared with every repro.py and workaround.md.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aoti_aten_fallbacks import AtenFallbacks, ContractError, parse_config_value, split_configs  # noqa: E402

PACKAGE_FORMAT = "aoti_harness.package/1"
EXTRA_DIR = "extra/aoti_harness/"
# Raw tensors live outside extra/: torch.export.load reads every extra/ file as text.
TENSOR_DIR = "aoti_harness/"


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
        log(f"mode: model.eval() called: make_model() returned the module in training mode ({what}); the package "
            "is the module in eval mode, as it is served. Set keep_mode = True on aoti_package to package it as "
            "returned")
        model.eval()


def log(msg):
    print(f"[package_model] {msg}", file=sys.stderr, flush=True)


def probe_isas_at_once(cpu_vec_isa):
    """Inductor probes the host's vector ISAs one after the other, a test compile and a
    load each (about 3 s apiece here). Each answer is cached on its ISA object, so probing
    the ISAs the CPU claims on threads of their own (the compiles are processes) leaves
    valid_vec_isa_list only the cached answers to read. Where this wheel's module lacks
    what is used here, nothing is done and inductor probes as usual."""
    import platform
    from concurrent.futures import ThreadPoolExecutor

    checker = getattr(cpu_vec_isa, "x86_isa_checker", None)
    candidates = getattr(cpu_vec_isa, "supported_vec_isa_list", None)
    if checker is None or candidates is None or platform.machine() not in ("x86_64", "AMD64"):
        return
    flags = checker()
    claimed = [isa for isa in candidates if all(flag in flags for flag in str(isa).split())]
    if len(claimed) > 1:
        with ThreadPoolExecutor(len(claimed)) as pool:
            list(pool.map(bool, claimed))


def probe_vector_isas(shared_dir=None):
    """The host's vector ISAs, probed once per machine rather than once per process.

    Inductor compiles a test program per ISA and loads it (about 7 s of g++ here) in its
    cache directory, which is each packaging action's own: every package paid for it. The
    test programs are built in `shared_dir` instead (by default beside the headers inductor
    precompiles, <tempdir>/torchinductor_<user>), where inductor names each by its code,
    flags and compiler and locks it while building; each is still loaded afresh by a child
    process, and the answers stay cached in this process for its compiles. The compile's
    own cache directory is restored before anything else is compiled. On any problem the
    probes run in the process's own cache, as inductor does. Returns the ISAs' names."""
    from torch._inductor import cpu_vec_isa

    own = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    try:
        if shared_dir is None:
            from torch._inductor.runtime.cache_dir_utils import default_cache_dir

            shared_dir = os.path.join(default_cache_dir(), "aoti_harness_vector_isas")
        os.makedirs(shared_dir, exist_ok=True)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = shared_dir
        probe_isas_at_once(cpu_vec_isa)
        isas = cpu_vec_isa.valid_vec_isa_list()
    except Exception as e:
        log(f"the vector ISAs are not probed in {shared_dir} ({type(e).__name__}: {e}); probed here instead")
        isas = None
    finally:
        if own is None:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = own
    if isas is None:
        probe_isas_at_once(cpu_vec_isa)
        isas = cpu_vec_isa.valid_vec_isa_list()
    return [str(i) for i in isas]


# The same list as harness/subprocess.cc (StrippedTorchVariables); "*" ends a prefix.
STRIPPED_TORCH_VARIABLES = (
    "DUMP_AOTI_MINIFIER", "AOTINDUCTOR_REPRO_LEVEL", "TORCHDYNAMO_REPRO_*", "TORCH_COMPILE_DEBUG",
    "TORCH_COMPILE_DEBUG_DIR", "TORCH_COMPILE_DEBUG_SAVE_REAL", "TORCH_COMPILE_CPROFILE", "TORCH_LOGS",
    "TORCH_TRACE", "TORCHINDUCTOR_NAN_ASSERTS", "TORCHINDUCTOR_RUNTIME_TRITON_NAN_ASSERTS",
    "TORCHINDUCTOR_SAVE_ARGS", "TORCHINDUCTOR_PROFILE", "TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE",
    "AOT_INDUCTOR_DEBUG_COMPILE", "AOT_INDUCTOR_DEBUG_SYMBOLS", "AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER",
    "AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT", "AOTI_RUNTIME_CHECK_INPUTS", "CUDA_LAUNCH_BLOCKING",
    "PYTORCH_NO_CUDA_MEMORY_CACHING")


def is_stripped_torch_variable(name):
    return any(name.startswith(v[:-1]) if v.endswith("*") else name == v for v in STRIPPED_TORCH_VARIABLES)


def load_model_file(path):
    if not os.path.isfile(path):
        raise ContractError(f"model file {path!r} does not exist")
    # A model file may import modules beside it (given to aoti_package as data).
    model_dir = os.path.dirname(os.path.abspath(path))
    if model_dir not in sys.path:
        sys.path.insert(0, model_dir)
    spec = importlib.util.spec_from_file_location("aoti_model_under_test", path)
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
    args = module.example_inputs()
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


def tensor_record(t, name, file_name):
    return {
        "name": name,
        "dtype": str(t.dtype).replace("torch.", ""),
        "sizes": list(t.shape),
        "strides": list(t.stride()),
        "device": str(t.device),
        "file": file_name,
    }


def raw_bytes(t):
    """The harness' raw tensor format (harness/tensor_io.h): the values in row-major order;
    tensor_record() keeps the strides to rebuild the layout."""
    import torch

    # A fresh dense copy: .contiguous() alone keeps odd strides on size-1 dims (a [1, 1]
    # tensor with strides [2, 2] is "contiguous"), which the byte view refuses.
    t = t.detach().to("cpu")
    flat = torch.empty(t.numel(), dtype=t.dtype).copy_(t.reshape(-1))
    return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""


def read_raw_tensor(rec, data):
    """The inverse of raw_bytes + tensor_record, as ReadRawTensor in harness/tensor_io.cc:
    the recorded strides come back, and a broadcast layout (stride 0, from expand) is
    rebuilt over one copy of each repeated value."""
    import torch

    dtype = getattr(torch, rec["dtype"], None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"tensor {rec.get('name', '')!r}: unknown dtype {rec['dtype']!r}")
    sizes, strides = list(rec["sizes"]), list(rec.get("strides") or [])
    numel = 1
    for s in sizes:
        numel *= s
    expected = numel * torch.empty((), dtype=dtype).element_size()
    if len(data) != expected:
        raise ValueError(f"tensor {rec.get('name', '')!r}: holds {len(data)} bytes, expected {expected} "
                         f"for {rec['dtype']}{sizes}")
    flat = torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)
    t = flat.view(dtype).reshape(sizes) if data else torch.empty(sizes, dtype=dtype)
    if not strides or list(t.stride()) == strides:
        return t.clone()
    stored_sizes, source = list(sizes), t
    for d, (size, stride) in enumerate(zip(sizes, strides)):
        if stride == 0 and size > 1:
            stored_sizes[d] = 1
            source = source.narrow(d, 0, 1)
    try:
        out = torch.empty_strided(stored_sizes, strides, dtype=dtype)
        out.copy_(source)
    except RuntimeError:
        return t.clone()  # some other overlapping layout: the values, laid out contiguously
    return out.as_strided(sizes, strides)


def merge_archives(out_path, sources, records, workdir, renames=()):
    """Writes out_path: every record of the source archives (first one wins), then `records`
    (name -> bytes, replacing any record of that name). A source may be (path, [(old prefix,
    new prefix), ...]) or (path, renames, only): its records are renamed as they are copied (a
    compiled model's data/aotinductor/model/ becoming data/aotinductor/<name>/), and with `only`
    just those whose names start with it are. Atomic: written aside, then moved."""
    from torch.export.pt2_archive._package import PT2ArchiveReader, PT2ArchiveWriter

    # The archive's top folder is named after the file, so the temporary file keeps the name.
    tmp_out = os.path.join(workdir, os.path.basename(out_path))
    with PT2ArchiveWriter(tmp_out) as w:
        for src in sources:
            src, prefixes, only = (tuple(src) + (None,))[:3] if isinstance(src, tuple) else (src, (), None)
            r = PT2ArchiveReader(src)
            for rec in r.get_file_names():
                if only and not rec.startswith(only):
                    continue
                name = rec
                for old, new in prefixes:
                    if rec.startswith(old):
                        name = new + rec[len(old):]
                        break
                if name not in records and not w.has_record(name):
                    w.write_bytes(name, r.read_bytes(rec))
        for name, data in records.items():
            w.write_bytes(name, data)
    shutil.move(tmp_out, out_path)


AOTI_DIR = "data/aotinductor/"


def compiled_as(aoti_pt2, name):
    """aoti_pt2 (made by aoti_compile_and_package, whose model is always "model") as a
    merge_archives source whose compiled model is named `name`."""
    return (aoti_pt2, [(AOTI_DIR + "model/", AOTI_DIR + name + "/")])


def load_program(path, name, what):
    """The exported program `name` of the archive at `path`, with its sample inputs; when the
    archive holds one program of another name (torch.export.save always writes "model"), that
    one. ContractError naming `what` and the programs there are otherwise."""
    from torch.export.pt2_archive import _package

    def read():
        try:
            with _package.PT2ArchiveReader(path) as reader:
                return _package._load_exported_programs(reader, reader.get_file_names(), None)
        except (AttributeError, TypeError):  # another torch: its public loader
            return _package.load_pt2(path).exported_programs

    imported = set()
    while True:
        try:
            programs = read()
            break
        except NotImplementedError as e:
            # A program whose inputs or outputs are a library's pytree type (transformers'
            # ModelOutput dicts): the type is registered when its module is imported, as the
            # team's own code does before it loads the program.
            found = re.search(r"Deserializing ([A-Za-z_][\w.]*)\.[A-Za-z_]\w* in pytree is not registered", str(e))
            if not found or found.group(1) in imported:
                raise ContractError(f"{what} {path!r}: cannot read its exported program: {e}") from e
            imported.add(found.group(1))
            try:
                importlib.import_module(found.group(1))
            except Exception as ie:
                raise ContractError(f"{what} {path!r}: its program uses {found.group(1)}'s pytree types, and that "
                                    f"module cannot be imported ({type(ie).__name__}: {ie})") from e
        except Exception as e:
            raise ContractError(f"{what} {path!r}: cannot read an exported program from it: {type(e).__name__}: {e}") from e
    if name in programs:
        return programs[name]
    if len(programs) == 1:
        return next(iter(programs.values()))
    raise ContractError(f"{what} {path!r}: " + (
        f"holds no exported program {name!r}; it holds {sorted(programs)}" if programs else
        "holds no exported program (models/<name>.json); expected a torch.export.save file or a package_pt2 "
        "archive with exported_programs"))


# The manifest's fields (harness/package_manifest.h is the C++ half): name -> type. The
# required ones are those ParsePackageManifest requires; the others have defaults there.
MANIFEST_FIELDS = {"format": str, "model_name": str, "compile": dict, "inputs": list, "eager_outputs": list}
MANIFEST_OPTIONAL = {
    "model_file": str, "seed": int, "torch_version": str, "torch_git_version": str, "inductor_configs": dict,
    "export": dict, "eager_fp64_outputs": list, "reduced_from": str, "cuda_version": str, "prebuilt": dict,
}
# A tensor record: dtype, sizes and file required; name, strides (row-major when absent)
# and device optional, as TensorRecordFromJson has them.
TENSOR_RECORD_FIELDS = {"dtype": str, "sizes": list, "file": str}
TENSOR_RECORD_OPTIONAL = {"name": str, "strides": (list, type(None)), "device": str}


def package_manifest(model_name, compile_record, inputs, *, model_file="", seed=0, inductor_configs=None,
                     strict_export=False, dynamic_shapes=False, from_program=False, eager_outputs=(),
                     eager_fp64_outputs=(), reduced_from=None, prebuilt=None):
    """The one place a manifest is made: every field, in the schema read_manifest checks."""
    import torch

    m = {
        "format": PACKAGE_FORMAT,
        "model_name": model_name,
        "model_file": model_file,
        "seed": seed,
        "torch_version": torch.__version__,
        "torch_git_version": getattr(torch.version, "git_version", "unknown"),
        # The CUDA runtime the compiled model links ("" for a CPU torch): the harness'
        # preflight checks it against its own runtime and the host's driver.
        "cuda_version": torch.version.cuda or "",
        "inductor_configs": dict(inductor_configs or {}),
        "export": {"strict": strict_export, "dynamic_shapes": dynamic_shapes, "from_program": from_program},
        "compile": compile_record,
        "inputs": list(inputs),
        "eager_outputs": list(eager_outputs),
        "eager_fp64_outputs": list(eager_fp64_outputs or ()),
    }
    if reduced_from:
        m["reduced_from"] = reduced_from
    if prebuilt:
        # Brought in as a team shipped it: the compiled model is the shipped one.
        m["prebuilt"] = {k: str(prebuilt.get(k, "")) for k in ("package", "sha256", "program", "inputs")}
    return check_manifest(m, "the manifest being written")


def check_manifest(m, what):
    """m itself when it follows the schema; else ContractError naming the field."""
    if not isinstance(m, dict):
        raise ContractError(f"{what}: package.json is not a JSON object")
    if m.get("format") != PACKAGE_FORMAT:
        raise ContractError(f"{what}: package.json has format {m.get('format')!r}, expected {PACKAGE_FORMAT!r}")
    for key, kind in list(MANIFEST_FIELDS.items()) + list(MANIFEST_OPTIONAL.items()):
        if key not in m:
            if key in MANIFEST_FIELDS:
                raise ContractError(f"{what}: package.json lacks {key!r}")
            continue
        if not isinstance(m[key], kind) or (kind is int and isinstance(m[key], bool)):
            raise ContractError(f"{what}: package.json field {key!r} is {type(m[key]).__name__}, "
                                f"expected {kind.__name__}")
    if not isinstance(m["compile"].get("status"), str):
        raise ContractError(f"{what}: package.json compile record lacks a status")
    for group in ("inputs", "eager_outputs", "eager_fp64_outputs"):
        for k, rec in enumerate(m.get(group, [])):
            if not isinstance(rec, dict):
                raise ContractError(f"{what}: package.json {group}[{k}] is not a tensor record")
            for key, kind in TENSOR_RECORD_FIELDS.items():
                if not isinstance(rec.get(key), kind):
                    raise ContractError(f"{what}: package.json {group}[{k}] lacks {key!r} ({kind.__name__})")
            for key, kind in TENSOR_RECORD_OPTIONAL.items():
                if key in rec and not isinstance(rec[key], kind):
                    raise ContractError(f"{what}: package.json {group}[{k}] field {key!r} has the wrong type")
            if "device" in rec and not DEVICE_RE.match(rec["device"]):
                raise ContractError(f"{what}: package.json {group}[{k}] device {rec['device']!r}: expected cpu, "
                                    "cuda or cuda:N")
    return m


def manifest_bytes(m):
    """package.json as written into an archive (the text PackageManifestToJson writes)."""
    return json.dumps(check_manifest(m, "the manifest being written"), indent=1, sort_keys=True).encode()


def read_manifest(text, what="package.json"):
    """A manifest read back, checked against the schema."""
    try:
        m = json.loads(text)
    except ValueError as e:
        raise ContractError(f"{what}: package.json is not valid JSON: {e}") from e
    return check_manifest(m, what)


def write_archive(out_path, ep, name, compiled, manifest, tensors, workdir, only=None):
    """The harness package: the program `name`, `compiled` (a merge_archives source holding
    the compiled model as data/aotinductor/<name>/, or None; with `only`, just its records
    under that prefix), the manifest and the tensors."""
    from torch.export.pt2_archive._package import package_pt2

    program_pt2 = os.path.join(workdir, "program.pt2")
    package_pt2(program_pt2, exported_programs={name: ep})
    records = {TENSOR_DIR + file_name: data for file_name, data in tensors}
    records[EXTRA_DIR + "package.json"] = manifest_bytes(manifest)
    if compiled and only:
        compiled = (compiled[0], compiled[1], only)
    merge_archives(out_path, [program_pt2] + ([compiled] if compiled else []), records, workdir)


def write_export_failure(args, error, ex_args, ex_kwargs, flat_out, configs, dyn, workdir):
    """An archive with no program: the manifest records that torch.export failed (compile
    status "export_error", with the error), beside the sample inputs and eager's outputs."""
    import torch
    from torch.utils import _pytree as pytree

    tensors, in_recs, out_recs = [], [], []
    for i, t in enumerate(pytree.tree_leaves((ex_args, ex_kwargs))):
        if isinstance(t, torch.Tensor):
            in_recs.append(tensor_record(t, f"input_{i}", f"tensors/input_{i}.bin"))
            tensors.append((f"tensors/input_{i}.bin", raw_bytes(t)))
    for i, t in enumerate(flat_out):
        if isinstance(t, torch.Tensor):
            out_recs.append(tensor_record(t, f"output_{i}", f"tensors/eager_{i}.bin"))
            tensors.append((f"tensors/eager_{i}.bin", raw_bytes(t)))
    record = {"status": "export_error", "seconds": 0.0,
              "error": {"type": f"{type(error).__module__}.{type(error).__qualname__}", "message": str(error),
                        "compiler_errors": "", "traceback": "".join(traceback.format_tb(error.__traceback__))}}
    manifest = package_manifest(args.name, record, in_recs, model_file=args.label or args.model, seed=args.seed,
                                inductor_configs=configs, strict_export=args.strict_export,
                                dynamic_shapes=dyn is not None, eager_outputs=out_recs)
    records = {TENSOR_DIR + name: data for name, data in tensors}
    records[EXTRA_DIR + "package.json"] = manifest_bytes(manifest)
    merge_archives(args.out, [], records, workdir)


def compiler_errors(message, context=2, limit=40):
    """The compiler's `error:` lines with a little context, without the warning flood."""
    lines = message.splitlines()
    keep = set()
    for i, line in enumerate(lines):
        if re.search(r"\berror\b", line) and not line.startswith(("CppCompileError", "InductorError")):
            keep.update(range(i, min(len(lines), i + context + 1)))
    picked = [lines[i] for i in sorted(keep)][:limit]
    return "\n".join(picked)


class KernelInformation:
    """Inductor's provenance record of a compile (trace.provenance_tracking_level != 0): each
    generated kernel and extern call, by its name in the generated code -> one list per call
    of it, in the order inductor generated them (its ":<handle>" suffix), of the exported
    graph's nodes the call came from. A name called twice (an extern kernel such as
    aoti_torch_cpu_addmm_out, or one kernel's code shared) has two lists.

    AOTI writes the record into the package only once the package is built; after a compile
    error it is gone (inductor restores its provenance state when the compile ends). So it is
    read at the C++ compile itself, whether that succeeds or fails, by wrapping
    AotCodeCompiler.compile for the duration of one compile. A torch without that entry point
    or without provenance tracking gives no record: the reducer then reads kernels' names."""

    def __init__(self, configs):
        self.record = None
        self.wanted = str(configs.get("trace.provenance_tracking_level", 0)) not in ("0", "False", "None")

    def __enter__(self):
        if not self.wanted:
            return self
        from torch._inductor import codecache, debug

        self.cls = getattr(codecache, "AotCodeCompiler", None)
        self.original = getattr(self.cls, "compile", None) if self.cls else None
        if self.original is None or not hasattr(debug, "create_kernel_information_json"):
            return self

        def compile_and_record(*args, **kwargs):
            try:
                return self.original(*args, **kwargs)
            finally:
                # A record that cannot be read is no record; it never changes the compile's outcome.
                try:
                    self.record = self.calls(debug.create_kernel_information_json())
                except Exception as e:
                    log(f"inductor's provenance record is unreadable, ignored: {type(e).__name__}: {e}")

        self.cls.compile = staticmethod(compile_and_record)
        return self

    @staticmethod
    def calls(information):
        def handle(kernel):
            name, _, number = kernel.rpartition(":")
            return (name, int(number)) if name and number.isdigit() else (kernel, 0)

        record = {}
        for kernel in sorted(information, key=lambda k: handle(k)[1]):
            record.setdefault(handle(kernel)[0], []).append([str(n) for n in information[kernel].get("pre_grad_nodes", [])])
        return record

    def __exit__(self, *exc):
        if self.wanted and self.original is not None:
            self.cls.compile = self.original
        return False


def compile_aoti(ep, configs, pt2_path):
    """Returns the compile record; never raises for a compiler failure. With provenance
    tracking on, the record's "kernel_information" is KernelInformation's."""
    import torch

    start = time.time()
    inductor_configs, fallbacks, undecomposed = split_configs(configs)
    provenance = KernelInformation(configs)
    try:
        with provenance, AtenFallbacks(fallbacks, undecomposed):
            torch._inductor.aoti_compile_and_package(
                ep, package_path=pt2_path, inductor_configs=inductor_configs)
        record = {"status": "ok", "seconds": round(time.time() - start, 3)}
    except Exception as e:
        record = {
            "status": "error",
            "seconds": round(time.time() - start, 3),
            "error": {
                "type": f"{type(e).__module__}.{type(e).__qualname__}",
                "message": str(e),
                "compiler_errors": compiler_errors(str(e)),
                "traceback": "".join(traceback.format_tb(e.__traceback__)),
            },
        }
    if provenance.record is not None:
        record["kernel_information"] = provenance.record
    return record


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


def tensor_records(ep, flat_in, flat_out, flat_out64, source):
    """The raw tensors and their manifest records: the flat inputs, eager's and float64's outputs."""
    import torch

    sig = ep.graph_signature
    in_names = [s.arg.name for s in sig.input_specs if s.kind.name == "USER_INPUT"]
    out_names = [getattr(s.arg, "name", "") for s in sig.output_specs if s.kind.name == "USER_OUTPUT"]
    tensors, records = [], {"inputs": [], "eager": [], "eager_fp64": []}
    for i, t in enumerate(flat_in):
        if not isinstance(t, torch.Tensor):
            raise ContractError(f"{source}: input {i} is a {type(t).__name__}; only tensor inputs are supported")
        fname = f"tensors/input_{i}.bin"
        records["inputs"].append(tensor_record(t, in_names[i] if i < len(in_names) else f"input_{i}", fname))
        tensors.append((fname, raw_bytes(t)))
    for group, flat in (("eager", flat_out), ("eager_fp64", flat_out64 or [])):
        for i, t in enumerate(flat):
            if not isinstance(t, torch.Tensor):
                continue
            fname = f"tensors/{group}_{i}.bin"
            records[group].append(tensor_record(t, out_names[i] if i < len(out_names) else f"output_{i}", fname))
            tensors.append((fname, raw_bytes(t)))
    return tensors, records


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


def sha256_of(path):
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_call_spec(shipped, model_name, ep):
    """The shipped compiled model takes and returns as many values as the program: loaded
    here (not run) and its call spec compared with the program's. Where it cannot be loaded
    on this host (a CUDA package on a CPU machine), the test reports that instead."""
    import torch
    import torch.utils._pytree as pytree

    try:
        loader = torch._C._aoti.AOTIModelPackageLoader(shipped, model_name, False, 1, -1)
        in_spec, out_spec = (pytree.treespec_loads(s) for s in loader.get_call_spec())
    except Exception as e:
        log(f"the shipped compiled model's call spec was not read here ({type(e).__name__}: {str(e)[:200]}); the "
            "test checks it by running it")
        return
    for what, shipped_spec, program_spec in (("inputs", in_spec, ep.call_spec.in_spec),
                                             ("outputs", out_spec, ep.call_spec.out_spec)):
        if program_spec is not None and shipped_spec.num_leaves != program_spec.num_leaves:
            raise ContractError(f"--prebuilt {shipped!r}: its compiled model {model_name!r} takes {shipped_spec.num_leaves} "
                                f"{what}, and the exported program takes {program_spec.num_leaves}: the package and the "
                                "program are not the same model (give the exported program it was compiled from)")


def package_prebuilt(args, configs, workdir, start):
    """A harness package around a .pt2 a team shipped: its compiled model copied as it is
    (never recompiled), the exported program (from the same archive or --exported-program),
    inputs (--inputs, or the program's own example inputs), eager's outputs and the manifest."""
    import torch
    from torch.export.pt2_archive._package import PT2ArchiveReader

    shipped = args.prebuilt
    if not os.path.isfile(shipped):
        raise ContractError(f"--prebuilt {shipped!r} does not exist")
    try:
        with PT2ArchiveReader(shipped) as r:
            names = r.get_file_names()
    except Exception as e:
        raise ContractError(f"--prebuilt {shipped!r}: not a .pt2 archive ({type(e).__name__}: {e}); expected the "
                            "file aoti_compile_and_package (or package_pt2) wrote") from e
    compiled = sorted({n[len(AOTI_DIR):].split("/")[0] for n in names if n.startswith(AOTI_DIR) and
                       "/" in n[len(AOTI_DIR):]})
    if not compiled:
        raise ContractError(f"--prebuilt {shipped!r}: holds no compiled model ({AOTI_DIR}<name>/); expected a .pt2 "
                            "made by aoti_compile_and_package or package_pt2(aoti_files=...)")
    if args.name:
        if args.name not in compiled:
            raise ContractError(f"--prebuilt {shipped!r}: holds no compiled model {args.name!r}; it holds {compiled}")
        name = args.name
    elif len(compiled) == 1:
        name = compiled[0]
    else:
        raise ContractError(f"--prebuilt {shipped!r}: holds several compiled models {compiled}; name the one under "
                            "test (aoti_prebuilt_package's model_name)")
    if args.exported_program:
        program_from = args.label_program or args.exported_program
        ep = load_program(args.exported_program, name, "--exported-program")
    elif f"models/{name}.json" in names:
        program_from = "the shipped archive"
        ep = load_program(shipped, name, "--prebuilt")
    else:
        raise ContractError(f"--prebuilt {shipped!r}: holds no exported program for {name!r} (models/{name}.json); "
                            "give the torch.export.save file of the program it was compiled from "
                            "(aoti_prebuilt_package's program)")
    if args.inputs:
        inputs_from = args.label_inputs or args.inputs
        ex_args, ex_kwargs = read_inputs_file(args.inputs, "--inputs")
    elif ep.example_inputs is not None:
        inputs_from = "the program's example inputs"
        ex_args, ex_kwargs = ep.example_inputs
    else:
        raise ContractError(f"the exported program ({program_from}) has no example inputs; give inputs "
                            "(aoti_prebuilt_package's inputs: a torch.save file or a Python file with example_inputs())")
    check_call_spec(shipped, name, ep)
    source = args.label or shipped
    flat_out, flat_out64 = run_eager(ep.module(), ex_args, ex_kwargs,
                                     source if not args.inputs else f"{source} on the inputs {inputs_from}")
    tensors, recs = tensor_records(ep, flat_inputs(ep, ex_args, ex_kwargs), flat_out, flat_out64, source)
    manifest = package_manifest(
        name, {"status": "ok", "seconds": 0.0}, recs["inputs"], model_file=source, seed=args.seed,
        inductor_configs=configs, dynamic_shapes=bool(ep.range_constraints), from_program=True,
        eager_outputs=recs["eager"], eager_fp64_outputs=recs["eager_fp64"],
        prebuilt={"package": source, "sha256": sha256_of(shipped), "program": program_from, "inputs": inputs_from})
    # The compiled model exactly as shipped: its data/aotinductor/<name>/ records, copied.
    write_archive(args.out, ep, name, (shipped, []), manifest, tensors, workdir, only=AOTI_DIR + name + "/")
    log(f"wrote {args.out} in {time.time() - start:.1f}s (the shipped compiled model {name!r}, not recompiled)")
    return 0


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


def package(args):
    start = time.time()
    if args.build_key:
        check_build_key(args.build_key)
    configs = {k: parse_config_value(v) for k, v in json.loads(args.inductor_configs).items()}
    split_configs(configs)  # a harness key that is wrong fails the build here, not as a compile error
    # torch internals warn about their own deprecations on every export; not the user's concern.
    warnings.filterwarnings("ignore", category=FutureWarning)
    # PyTorch's own debug and repro variables (DUMP_AOTI_MINIFIER runs torch's minifier,
    # and the model, inside aoti_compile_and_package) are read when torch is imported; a
    # user's --action_env must not switch them on here. The list is the harness' one.
    for name in list(os.environ):
        if is_stripped_torch_variable(name):
            del os.environ[name]
    workdir = tempfile.mkdtemp(prefix="aoti_package_")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(workdir, "inductor_cache"))
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    try:
        import torch

        for lib in args.load_library:
            try:
                torch.ops.load_library(lib)
            except Exception as e:
                raise ContractError(f"--load-library {lib!r}: cannot load the operator library: {e}") from e
        if args.prebuilt:
            return package_prebuilt(args, configs, workdir, start)
        args.name = args.name or "model"
        source = args.model or args.program
        ep = None
        if args.program:
            # An exported program (a reducer's repro.pt2): compile it as it is.
            try:
                ep = load_program(args.program, args.name, "--program")
            except ContractError as e:
                if "cuda" in str(e).lower() and not torch.cuda.is_available():
                    raise ContractError(f"--program {args.program!r}: the program was exported on CUDA, and this "
                                        f"process cannot use CUDA (torch {torch.__version__}); compile it on a GPU "
                                        f"host: {e}") from e
                raise
            if ep.example_inputs is None:
                raise ContractError(f"--program {args.program!r}: the archive has no sample inputs (data/sample_inputs/)")
            ex_args, ex_kwargs = ep.example_inputs
            model, dyn = ep.module(), None
        else:
            module = load_model_file(args.model)
            dtype = None
            if args.dtype:
                dtype = getattr(torch, args.dtype, None)
                if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
                    raise ContractError(f"--dtype {args.dtype!r}: expected a floating dtype such as bfloat16")
            model_kwargs = {k: parse_config_value(v) if isinstance(v, str) else v
                            for k, v in json.loads(args.model_kwargs).items()}
            device = check_device(args.device, "--device") if args.device else None
            model, ex_args, ex_kwargs, dyn = build_case(module, args.model, args.seed, model_kwargs, dtype, device)
            set_mode(model, args.keep_mode)

        flat_out, flat_out64 = run_eager(model, ex_args, ex_kwargs, source)

        if ep is None:
            log(f"torch.export (strict={args.strict_export})")
            try:
                # Under no_grad, as AOTI's own recipe exports for inference: a model's
                # torch.no_grad() regions (rotary embeddings) then stay plain ATen calls
                # instead of set-grad higher-order ops.
                with torch.no_grad():
                    ep = torch.export.export(model, ex_args, ex_kwargs, dynamic_shapes=dyn,
                                             strict=args.strict_export)
            except Exception as e:
                # Recorded, as a compile failure is: the model's test then fails with the
                # export's error and its diagnosis (harness/triage.h), not the build.
                log(f"torch.export FAILED ({type(e).__name__}), recorded in the archive; the build goes on:\n"
                    f"{str(e).strip()[:800]}")
                write_export_failure(args, e, ex_args, ex_kwargs, flat_out, configs, dyn, workdir)
                return 0

        tensors, recs = tensor_records(ep, flat_inputs(ep, ex_args, ex_kwargs), flat_out, flat_out64, source)
        aoti_pt2 = None
        if args.export_only:
            compile_rec = {"status": "skipped", "seconds": 0.0}
        else:
            log(f"AOTI compile with inductor configs {json.dumps(configs, sort_keys=True)}")
            if not args.device or args.device == "cpu":
                probe_vector_isas()
            aoti_pt2 = os.path.join(workdir, "aoti.pt2")
            compile_rec = compile_aoti(ep, configs, aoti_pt2)
            # The package AOTI wrote holds the provenance record already, when it was asked for.
            compile_rec.pop("kernel_information", None)
            if compile_rec["status"] != "ok":
                aoti_pt2 = None
                err = compile_rec["error"]
                detail = err["compiler_errors"] or err["message"].strip()[:500]
                log(f"compile FAILED ({err['type']}), recorded in the archive; the build goes on:\n{detail}")
            else:
                log(f"compiled in {compile_rec['seconds']:.1f}s")

        manifest = package_manifest(
            args.name, compile_rec, recs["inputs"],
            model_file=args.label or args.model or args.program, seed=args.seed, inductor_configs=configs,
            strict_export=args.strict_export, dynamic_shapes=dyn is not None, from_program=bool(args.program),
            eager_outputs=recs["eager"], eager_fp64_outputs=recs["eager_fp64"])
        write_archive(args.out, ep, args.name, compiled_as(aoti_pt2, args.name) if aoti_pt2 else None, manifest,
                      tensors, workdir)
        log(f"wrote {args.out} in {time.time() - start:.1f}s (compile: {compile_rec['status']})")
        return 0
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="Python model file (see the contract above)")
    src.add_argument("--program", help="an exported program archive (.pt2 with sample inputs), compiled as it is")
    src.add_argument("--prebuilt", help="a .pt2 a team shipped (aoti_compile_and_package): its compiled model is "
                                        "kept as it is, never recompiled")
    p.add_argument("--exported-program", default="",
                   help="with --prebuilt: the torch.export.save file of its program (default: the shipped archive's own)")
    p.add_argument("--inputs", default="",
                   help="with --prebuilt: a torch.save file of inputs, or a Python file with example_inputs() "
                        "(default: the program's example inputs)")
    p.add_argument("--label-program", default="", help="how to name --exported-program in the manifest")
    p.add_argument("--label-inputs", default="", help="how to name --inputs in the manifest")
    p.add_argument("--out", required=True, help="output archive, must end in .pt2")
    p.add_argument("--name", default="",
                   help="model name inside the archive (default: model; with --prebuilt, the shipped model's)")
    p.add_argument("--label", default="", help="how to name the model file in the manifest")
    p.add_argument("--inductor-configs", default="{}", help="JSON object of inductor config patches")
    p.add_argument("--export-only", action="store_true", help="skip the AOTI compile")
    p.add_argument("--strict-export", action="store_true", help="torch.export with strict=True")
    p.add_argument("--keep-mode", action="store_true",
                   help="export the module in the mode make_model() returned it (default: model.eval() first)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--model-kwargs", default="{}", help="JSON object of keyword arguments for make_model()")
    p.add_argument("--dtype", default="", help="cast the model and its floating inputs to this dtype (e.g. bfloat16)")
    p.add_argument("--device", default="", help="move the model and its inputs to this device first (cuda, cuda:1)")
    p.add_argument("--load-library", action="append", default=[],
                   help="shared library of custom operators to load before the model file")
    p.add_argument("--build-key", default="",
                   help="@torch//:aoti_build_key.json: refuse to build on a host whose CPU ISA differs from it")
    args = p.parse_args(argv)
    for flag, value in (("--exported-program", args.exported_program), ("--inputs", args.inputs)):
        if value and not args.prebuilt:
            p.error(f"{flag} goes with --prebuilt (a shipped package); a model file brings its own inputs")
    if not args.out.endswith(".pt2"):
        p.error(f"--out {args.out!r}: expected a path ending in .pt2")
    for name, value in (("--inductor-configs", args.inductor_configs), ("--model-kwargs", args.model_kwargs)):
        try:
            if not isinstance(json.loads(value), dict):
                raise ValueError("not an object")
        except ValueError as e:
            p.error(f"{name} {value!r}: expected a JSON object ({e})")
    try:
        return package(args)
    except ContractError as e:
        log(f"ERROR: {e}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
