"""The .pt2 archive: read an exported program, write and merge archives, record an export
failure.
"""

import importlib.util
import os
import re
import shutil
import traceback

from aoti_aten_fallbacks import ContractError

from .common import AOTI_DIR, EXTRA_DIR, TENSOR_DIR
from .manifest import manifest_bytes, package_manifest
from .tensors import raw_bytes, tensor_record


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


def compiled_as(aoti_pt2, name):
    """aoti_pt2 (made by aoti_compile_and_package, whose model is always "model") as a
    merge_archives source whose compiled model is named `name`."""
    return (aoti_pt2, [(AOTI_DIR + "model/", AOTI_DIR + name + "/")])


def declared_pytree_modules(given=()):
    """The modules whose pytree types a program may use, as the model repository declares them:
    `given` (a rule's pytree_modules, or a test's --aoti_pytree_modules through its case) and
    $AOTI_PYTREE_MODULES (comma-separated)."""
    from_env = os.environ.get("AOTI_PYTREE_MODULES", "")
    return set(given) | {m.strip() for m in from_env.split(",") if m.strip()}


def undeclared_pytree_module(what, path, type_name, module):
    """The error for a program whose pytree type comes from a module no one declared."""
    return (f"{what} {path!r}: its program uses the pytree type {type_name}, which is registered when the module "
            f"{module} is imported. The harness imports only the modules the model repository declares, never one "
            f"that only a file names, and {module} is not declared. Declare it in BUILD: pytree_modules = "
            f"[\"{module}\"] on the aoti_prebuilt_package or aoti_package that reads this program and on its "
            f"aoti_model_test (the test's flag: --aoti_pytree_modules={module}; or AOTI_PYTREE_MODULES={module} in "
            f"the environment)")


def load_program(path, name, what, pytree_modules=()):
    """The exported program `name` of the archive at `path`, with its sample inputs; when the
    archive holds one program of another name (torch.export.save always writes "model"), that
    one. ContractError naming `what` and the programs there are otherwise. A library's pytree
    type in the program's inputs or outputs is registered by importing its module, only when
    the module is declared (declared_pytree_modules); else ContractError naming the type, the
    module and how to declare it."""
    from torch.export.pt2_archive import _package
    # A PT2E int8 program's quantize/dequantize operators: torch defines them in Python, in a
    # module that `import torch` does not load, and the program's nodes name them.
    importlib.import_module("torch.ao.quantization.fx._decomposed")

    def read():
        try:
            with _package.PT2ArchiveReader(path) as reader:
                return _package._load_exported_programs(reader, reader.get_file_names(), None)
        except (AttributeError, TypeError):  # another torch: its public loader
            return _package.load_pt2(path).exported_programs

    imported, allowed = set(), declared_pytree_modules(pytree_modules)
    while True:
        try:
            programs = read()
            break
        except NotImplementedError as e:
            # A program whose inputs or outputs are a library's pytree type (transformers'
            # ModelOutput dicts): the type is registered when its module is imported, as the
            # team's own code does before it loads the program.
            # (torch up to 2.14 says "... in pytree is not registered", 2.15 "... in pytree
            # failed because the serialized type is not registered".)
            found = re.search(r"Deserializing (([A-Za-z_][\w.]*)\.[A-Za-z_]\w*) in pytree (?:is not|failed)", str(e))
            if not found or found.group(2) in imported:
                raise ContractError(f"{what} {path!r}: cannot read its exported program: {e}") from e
            if found.group(2) not in allowed:
                raise ContractError(undeclared_pytree_module(what, path, found.group(1), found.group(2))) from e
            imported.add(found.group(2))
            try:
                importlib.import_module(found.group(2))
            except Exception as ie:
                raise ContractError(f"{what} {path!r}: its program uses {found.group(2)}'s pytree types, and that "
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


class ProgramNotWritable(Exception):
    """torch's serializer cannot write the exported program; the message says why, in words."""


def serialize_error_type():
    from torch._export.serde.serialize import SerializeError

    return SerializeError


def unwritable_program_reason(error):
    """Why torch's serializer refused the program, in one line: the node it was writing (the
    innermost frame of the errors' tracebacks holding a torch.fx.Node named `node`: the
    serializer's handler of a call) and the innermost SerializeError's own message (torch
    wraps it in one that prints the whole node and a traceback)."""
    import torch

    chain, e = [], error
    while e is not None and e not in chain:
        chain.append(e)
        e = e.__cause__ or e.__context__
    node = None
    for e in chain:
        tb = e.__traceback__
        while tb is not None:
            candidate = tb.tb_frame.f_locals.get("node")
            if isinstance(candidate, torch.fx.Node):
                node = candidate
            tb = tb.tb_next
    where = ""
    if node is not None:
        target = node.target
        if isinstance(target, torch._ops.HigherOrderOperator):
            what = f"torch.ops.higher_order.{target.name()}"
        elif isinstance(target, torch._ops.OpOverload):
            what = f"torch.ops.{target}"
        else:
            what = getattr(target, "__qualname__", str(target))
        where = f"node '{node.name}' ({what}): "
    inner = [e for e in chain if isinstance(e, serialize_error_type())] or chain
    message = re.sub(r"<class '(?:[\w.]+\.)?(\w+)'>", r"\1", " ".join(str(inner[-1]).split()))
    if len(message) > 300:
        message = message[:300] + " ..."
    return f"torch's serializer cannot write the exported program: {where}{type(inner[-1]).__name__}: {message}"


def write_program(ep, name, workdir):
    """program.pt2 in workdir, holding the exported program `name` (with its sample inputs);
    ProgramNotWritable where torch's serializer refuses it (flex attention's block mask)."""
    from torch.export.pt2_archive._package import package_pt2

    program_pt2 = os.path.join(workdir, "program.pt2")
    try:
        package_pt2(program_pt2, exported_programs={name: ep})
    except serialize_error_type() as e:
        raise ProgramNotWritable(unwritable_program_reason(e)) from e
    return program_pt2


def write_archive(out_path, program_pt2, compiled, manifest, tensors, workdir, only=None):
    """The harness package: the program (program_pt2, from write_program; None for a
    program torch could not write, which the manifest's program_not_held explains),
    `compiled` (a merge_archives source holding the compiled model as
    data/aotinductor/<name>/, or None; with `only`, just its records under that prefix), the
    manifest and the tensors."""
    records = {TENSOR_DIR + file_name: data for file_name, data in tensors}
    records[EXTRA_DIR + "package.json"] = manifest_bytes(manifest)
    if compiled and only:
        compiled = (compiled[0], compiled[1], only)
    sources = ([program_pt2] if program_pt2 else []) + ([compiled] if compiled else [])
    merge_archives(out_path, sources, records, workdir)


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
