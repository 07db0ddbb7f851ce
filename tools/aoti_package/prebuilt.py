"""A shipped package (aoti_prebuilt_package): its compiled model kept as it is, its provenance
recorded.
"""

import os
import time

from aoti_aten_fallbacks import ContractError

from .archive import load_program, write_archive, write_program
from .common import AOTI_DIR, log
from .manifest import package_manifest
from .model_file import flat_inputs, read_inputs_file, run_eager
from .python_ops import python_only_ops
from .tensors import tensor_records


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


def program_torch_version(archive, name):
    """The torch that exported the program `name` of `archive` (its models/<name>.json's
    torch_version), or "" where the record holds none."""
    import json
    import zipfile

    try:
        with zipfile.ZipFile(archive) as z:
            entry = next((n for n in z.namelist() if n.endswith(f"models/{name}.json")), None)
            if entry is None:
                return ""
            return str(json.loads(z.read(entry)).get("torch_version") or "")
    except (OSError, ValueError, zipfile.BadZipFile):
        return ""


def compiled_model_needs(archive, name, workdir):
    """What the shipped compiled model `name` needs of libtorch: (the aoti_torch_* functions
    its shared objects call, the torch headers they were compiled against or "")."""
    import re
    import subprocess
    import zipfile

    needs, headers = set(), ""
    with zipfile.ZipFile(archive) as z:
        for n in z.namelist():
            if not (n.endswith(".so") and f"{AOTI_DIR}{name}/" in n):
                continue
            so, data = os.path.join(workdir, "shipped_" + os.path.basename(n)), z.read(n)
            with open(so, "wb") as f:
                f.write(data)
            found = re.search(rb"(/[\x21-\x7e]{1,400}?)/torch/csrc/inductor/aoti_runtime/", data)
            if found and not headers:
                headers = found.group(1).decode(errors="replace")
            try:
                out = subprocess.run(["nm", "-D", "--undefined-only", so], capture_output=True, text=True,
                                     timeout=60).stdout
            except (OSError, subprocess.TimeoutExpired):
                continue
            needs.update(line.split()[-1] for line in out.splitlines() if line.split() and
                         line.split()[-1].startswith("aoti_torch_"))
    return sorted(needs), headers


def missing_in_this_torch(symbols):
    """Of `symbols`, those no library of this torch defines: a compiled model that calls one
    cannot be loaded here at all."""
    import ctypes

    import torch

    lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    libs = []
    for so in ("libtorch_cpu.so", "libtorch_cuda.so", "libtorch.so"):
        if os.path.exists(os.path.join(lib, so)):
            try:
                libs.append(ctypes.CDLL(os.path.join(lib, so)))
            except OSError:
                pass
    return [s for s in symbols if not any(hasattr(l, s) for l in libs)]


def provenance(shipped, name, program_file, workdir):
    """Which torch built the shipped package, and whether this torch can load it."""
    import torch

    built_by, built_by_from = program_torch_version(shipped, name), "the shipped archive's exported program"
    if not built_by and program_file:
        built_by, built_by_from = program_torch_version(program_file, name) or program_torch_version(
            program_file, "model"), "the exported program given with it"
    needs, headers = compiled_model_needs(shipped, name, workdir)
    missing = missing_in_this_torch(needs)
    p = {"built_by": built_by, "built_by_from": built_by_from if built_by else "", "compiled_against": headers,
         "missing_symbols": ",".join(missing), "this_torch": torch.__version__}
    log(f"the shipped compiled model: built by torch {built_by or '(not recorded)'}"
        f"{' (' + built_by_from + ')' if built_by else ''}; this torch {torch.__version__} "
        + (f"lacks {', '.join(missing)}, which it calls: it cannot be loaded here" if missing
           else f"has all {len(needs)} aoti_torch_* functions it calls"))
    return p


def package_prebuilt(args, configs, workdir, start):
    """A harness package around a .pt2 a team shipped: its compiled model copied as it is
    (never recompiled), the exported program (from the same archive or --exported-program),
    inputs (--inputs, or the program's own example inputs), eager's outputs and the manifest."""
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
        ep = load_program(args.exported_program, name, "--exported-program", args.pytree_modules)
    elif f"models/{name}.json" in names:
        program_from = "the shipped archive"
        ep = load_program(shipped, name, "--prebuilt", args.pytree_modules)
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
        prebuilt={"package": source, "sha256": sha256_of(shipped), "program": program_from, "inputs": inputs_from,
                  **provenance(shipped, name, args.exported_program, workdir)},
        python_ops=python_only_ops(ep, shipped))
    # The compiled model exactly as shipped: its data/aotinductor/<name>/ records, copied.
    write_archive(args.out, write_program(ep, name, workdir), (shipped, []), manifest, tensors, workdir,
                  only=AOTI_DIR + name + "/")
    log(f"wrote {args.out} in {time.time() - start:.1f}s (the shipped compiled model {name!r}, not recompiled)")
    return 0
