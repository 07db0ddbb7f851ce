"""aoti_package: the packager behind aoti_package and aoti_prebuilt_package, by concern.

  common      the archive's layout, the format's name, the log
  model_file  the model file's contract: the module, its inputs, eager and float64 runs
  tensors     the harness' raw tensor format and the package's tensor records
  manifest    package.json: its schema, writer and reader
  archive     reading an exported program, writing and merging .pt2 archives
  compile     the AOTI compile and what the compiler said
  prebuilt    a shipped .pt2, kept as it is
  python_ops  the operators a program calls that are written only in Python
  build_key   the host's CPU ISA against the build's key
  cli         package(): the steps in order; main(): the command line

tools/package_model.py is the command (and `import package_model` keeps every name here).
"""
from .common import PACKAGE_FORMAT, EXTRA_DIR, TENSOR_DIR, AOTI_DIR, log, STRIPPED_TORCH_VARIABLES, is_stripped_torch_variable
from .model_file import training_modules, set_mode, load_model_file, DEVICE_RE, check_device, on_recorded_device, build_case, eager_fp64, run_eager, flat_inputs, read_inputs_file, shape_inputs
from .tensors import tensor_record, raw_bytes, read_raw_tensor, tensor_records, shape_input_records
from .manifest import MANIFEST_FIELDS, MANIFEST_OPTIONAL, TENSOR_RECORD_FIELDS, TENSOR_RECORD_OPTIONAL, package_manifest, check_manifest, manifest_bytes, read_manifest
from .archive import (ProgramNotWritable, compiled_as, load_program, merge_archives, write_archive, write_export_failure,
                      write_program)
from .compile import probe_isas_at_once, probe_vector_isas, compiler_errors, KernelInformation, compile_aoti
from .prebuilt import sha256_of, check_call_spec, package_prebuilt
from .python_ops import python_only_ops
from .build_key import host_isa_flags, check_build_key
from .cli import package, main
from aoti_aten_fallbacks import AtenFallbacks, ContractError, parse_config_value, split_configs

__all__ = [
    "PACKAGE_FORMAT",
    "EXTRA_DIR",
    "TENSOR_DIR",
    "AOTI_DIR",
    "log",
    "STRIPPED_TORCH_VARIABLES",
    "is_stripped_torch_variable",
    "training_modules",
    "set_mode",
    "load_model_file",
    "DEVICE_RE",
    "check_device",
    "on_recorded_device",
    "build_case",
    "eager_fp64",
    "run_eager",
    "flat_inputs",
    "read_inputs_file",
    "shape_inputs",
    "tensor_record",
    "raw_bytes",
    "read_raw_tensor",
    "tensor_records",
    "shape_input_records",
    "MANIFEST_FIELDS",
    "MANIFEST_OPTIONAL",
    "TENSOR_RECORD_FIELDS",
    "TENSOR_RECORD_OPTIONAL",
    "package_manifest",
    "check_manifest",
    "manifest_bytes",
    "read_manifest",
    "merge_archives",
    "compiled_as",
    "load_program",
    "write_archive",
    "write_program",
    "ProgramNotWritable",
    "write_export_failure",
    "probe_isas_at_once",
    "probe_vector_isas",
    "compiler_errors",
    "KernelInformation",
    "compile_aoti",
    "sha256_of",
    "check_call_spec",
    "package_prebuilt",
    "python_only_ops",
    "host_isa_flags",
    "check_build_key",
    "package",
    "main",
    "AtenFallbacks",
    "ContractError",
    "parse_config_value",
    "split_configs",
]
