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
  example_inputs() -> tuple of positional args   required (may take make_model's keyword
                                                 arguments by name, when its inputs depend on them)
  example_kwargs() -> dict                       optional
  dynamic_shapes() -> dynamic_shapes for export  optional
  shape_inputs() -> {name: inputs}               optional, with dynamic_shapes(): the inputs a
                                                 shape point uses ("min", "max", "distinct" replace
                                                 the harness' own; another name adds a point)
Both make_model and example_inputs run after torch.manual_seed(--seed). With --device
(cuda, cuda:1), the model and its tensor inputs are moved there before the eager run and
the export, so the package is compiled for that device; each input's device is recorded.
"""

import argparse
import json
import os
import re
import shutil
import tempfile
import time
import warnings

from aoti_aten_fallbacks import ContractError, parse_config_value, split_configs

from .archive import ProgramNotWritable, compiled_as, load_program, write_archive, write_export_failure, write_program
from .build_key import check_build_key
from .common import is_stripped_torch_variable, log
from .compile import compile_aoti, probe_vector_isas
from .manifest import package_manifest
from .model_file import build_case, check_device, flat_inputs, load_model_file, run_eager, set_mode, shape_inputs
from .prebuilt import package_prebuilt
from .python_ops import python_only_ops
from .tensors import shape_input_records, tensor_records


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
        ep, points = None, None
        if args.program:
            # An exported program (a reducer's repro.pt2): compile it as it is.
            try:
                ep = load_program(args.program, args.name, "--program", args.pytree_modules)
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
            torch.manual_seed(args.seed + 2)
            points = shape_inputs(module, args.model, model_kwargs, dtype, device)
            if points and dyn is None:
                raise ContractError(f"{args.model}: shape_inputs() gives inputs at shapes {sorted(points)}, but the "
                                    "program is exported with static shapes; define dynamic_shapes() too, or drop "
                                    "shape_inputs()")

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
                # export's error and its diagnosis (harness/triage/triage.h), not the build.
                log(f"torch.export FAILED ({type(e).__name__}), recorded in the archive; the build goes on:\n"
                    f"{str(e).strip()[:800]}")
                write_export_failure(args, e, ex_args, ex_kwargs, flat_out, configs, dyn, workdir)
                return 0

        tensors, recs = tensor_records(ep, flat_inputs(ep, ex_args, ex_kwargs), flat_out, flat_out64, source)
        shape_recs = shape_input_records(ep, points, source, tensors) if points else None
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

        # torch's serializer cannot write every program AOTI compiles (flex attention's block
        # mask): such a package holds the compiled model and Python's recordings, without the
        # program, and the manifest says why; the check judges it by those recordings.
        program_pt2, not_held = None, None
        try:
            program_pt2 = write_program(ep, args.name, workdir)
        except ProgramNotWritable as e:
            not_held = str(e)
            log(f"{not_held}\n  the package holds the compiled model and the eager and float64 outputs recorded here, "
                "without the program: the check judges the compiled model by those (the sample inputs only), with no "
                "C++ eager, and a failure is not reduced")
        manifest = package_manifest(
            args.name, compile_rec, recs["inputs"],
            model_file=args.label or args.model or args.program, seed=args.seed, inductor_configs=configs,
            strict_export=args.strict_export, dynamic_shapes=dyn is not None, from_program=bool(args.program),
            eager_outputs=recs["eager"], eager_fp64_outputs=recs["eager_fp64"], shape_inputs=shape_recs,
            python_ops=python_only_ops(ep, aoti_pt2), program_not_held=not_held)
        for rec in manifest.get("python_ops", []):
            log(f"the program calls {rec['op']}, an operator written only in Python ({rec['module'] or rec['defined_at']}):"
                " recorded; no C++ process can run it")
        write_archive(args.out, program_pt2, compiled_as(aoti_pt2, args.name) if aoti_pt2 else None, manifest,
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
    p.add_argument("--pytree-modules", default="",
                   help="comma-separated modules whose pytree types the program uses (the rule's pytree_modules): "
                        "the only modules imported to read a program")
    args = p.parse_args(argv)
    args.pytree_modules = [m.strip() for m in args.pytree_modules.split(",") if m.strip()]
    bad = [m for m in args.pytree_modules if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", m)]
    if bad:
        p.error(f"--pytree-modules: {bad[0]!r} is not a Python module name (dotted identifiers)")
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
