"""The manifest (extra/aoti_harness/package.json): its schema, writer and reader
(harness/archive/package_manifest.h is the C++ half).
"""

import json

from aoti_aten_fallbacks import ContractError

from .common import PACKAGE_FORMAT
from .model_file import DEVICE_RE


# The manifest's fields (harness/archive/package_manifest.h is the C++ half): name -> type. The
# required ones are those ParsePackageManifest requires; the others have defaults there.
MANIFEST_FIELDS = {"format": str, "model_name": str, "compile": dict, "inputs": list, "eager_outputs": list}

MANIFEST_OPTIONAL = {
    "model_file": str, "seed": int, "torch_version": str, "torch_git_version": str, "inductor_configs": dict,
    "export": dict, "eager_fp64_outputs": list, "reduced_from": str, "cuda_version": str, "prebuilt": dict,
    "shape_inputs": dict, "python_ops": list, "program_not_held": str,
}


# A tensor record: dtype, sizes and file required; name, strides (row-major when absent)
# and device optional, as TensorRecordFromJson has them.
TENSOR_RECORD_FIELDS = {"dtype": str, "sizes": list, "file": str}

TENSOR_RECORD_OPTIONAL = {"name": str, "strides": (list, type(None)), "device": str}


def package_manifest(model_name, compile_record, inputs, *, model_file="", seed=0, inductor_configs=None,
                     strict_export=False, dynamic_shapes=False, from_program=False, eager_outputs=(),
                     eager_fp64_outputs=(), reduced_from=None, prebuilt=None, shape_inputs=None, python_ops=(),
                     program_not_held=None):
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
    if program_not_held:
        # torch's serializer could not write the program: the package holds none (the reason).
        m["program_not_held"] = program_not_held
    if python_ops:
        # Operators written only in Python that the program calls (python_ops.python_only_ops).
        m["python_ops"] = [dict(r) for r in python_ops]
    if shape_inputs:
        # The model file's own inputs per shape point: {name: [tensor record]}.
        m["shape_inputs"] = {name: list(recs) for name, recs in shape_inputs.items()}
    if prebuilt:
        # Brought in as a team shipped it: the compiled model is the shipped one.
        m["prebuilt"] = {k: str(prebuilt.get(k, "")) for k in ("package", "sha256", "program", "inputs", "built_by",
                                                                "built_by_from", "compiled_against", "missing_symbols",
                                                                "this_torch")}
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
    for k, rec in enumerate(m.get("python_ops", [])):
        if not isinstance(rec, dict) or not isinstance(rec.get("op"), str) or not isinstance(rec.get("nodes"), int):
            raise ContractError(f"{what}: package.json python_ops[{k}] lacks 'op' (str) or 'nodes' (int)")
    if not isinstance(m["compile"].get("status"), str):
        raise ContractError(f"{what}: package.json compile record lacks a status")
    groups = [(g, m.get(g, [])) for g in ("inputs", "eager_outputs", "eager_fp64_outputs")]
    for name, recs in m.get("shape_inputs", {}).items():
        if not isinstance(recs, list):
            raise ContractError(f"{what}: package.json shape_inputs[{name!r}] is not a list of tensor records")
        groups.append((f"shape_inputs[{name!r}]", recs))
    for group, recs in groups:
        for k, rec in enumerate(recs):
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
