"""The package's constants (archive layout, format) and its log."""

import sys


PACKAGE_FORMAT = "aoti_harness.package/1"

EXTRA_DIR = "extra/aoti_harness/"


# Raw tensors live outside extra/: torch.export.load reads every extra/ file as text.
TENSOR_DIR = "aoti_harness/"

AOTI_DIR = "data/aotinductor/"


def log(msg):
    print(f"[package_model] {msg}", file=sys.stderr, flush=True)


# The same list as harness/util/subprocess.cc (StrippedTorchVariables); "*" ends a prefix.
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
