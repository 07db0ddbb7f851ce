"""Macros of the real-model corpus: one healthy model, and one planted failure."""

load("@aoti_harness//harness:defs.bzl", "aoti_model_test", "aoti_package")

# The planted bugs: inductor's test-only hooks, on a model configured to have the op. The
# relu runtime_error hook throws from the kernel: inside an OpenMP parallel region that
# terminates the process (SIGABRT, the "signal" class); compiled single-threaded
# (cpp.threads=1, as for a one-core deployment) the exception reaches the caller (the
# "runtime error" class).
RELU = "cpp.inject_relu_bug_TESTING_ONLY"

LOG1P = "cpp.inject_log1p_bug_TESTING_ONLY"

PLANTS = {
    "compile_error": ({"act": "relu"}, {RELU: "compile_error"}),
    "runtime_error": ({"act": "relu"}, {RELU: "runtime_error", "cpp.threads": "1"}),
    "signal": ({"act": "relu"}, {RELU: "runtime_error"}),
    "relu_accuracy": ({"act": "relu"}, {RELU: "accuracy"}),
    "log1p_accuracy": ({"head": "log1p"}, {LOG1P: "accuracy"}),
}

def real_model(name):
    """One healthy model of the corpus.

    <name>: the AOTI package; <name>_test: its check; <name>_bf16: the model in bfloat16
    (export only), for the interpreter's bit-identity test.

    Args:
      name: the model, <name>.py.
    """
    aoti_package(name = name, model = name + ".py", data = ["hf_output.py"])
    aoti_model_test(name = name + "_test", size = "medium", package = ":" + name)
    aoti_package(name = name + "_bf16", model = name + ".py", data = ["hf_output.py"], dtype = "bfloat16", export_only = True)

# Kernels named cpp__0, cpp__1, ... instead of after their ops: the name tells nothing.
UNNAMED = {"cpp.descriptive_names": "false"}

def planted(model, plant, unnamed = False, model_kwargs = None):
    """One planted failure of the corpus.

    <model>_<plant>: the package with the planted bug; <model>_<plant>_test fails. Tagged
    manual: tools/real_models.sh runs it under DUMP_AOTI_MINIFIER=1.

    Args:
      model: the model, <model>.py.
      plant: a key of PLANTS.
      unnamed: compiled with the kernels' descriptive names off (<model>_<plant>_unnamed).
      model_kwargs: the model's arguments, in place of the plant's.
    """
    kwargs, configs = PLANTS[plant]
    name = model + "_" + plant + ("_unnamed" if unnamed else "")
    aoti_package(
        name = name,
        model = model + ".py",
        data = ["hf_output.py"],
        model_kwargs = kwargs if model_kwargs == None else model_kwargs,
        inductor_configs = dict(configs, **UNNAMED) if unnamed else configs,
        tags = ["manual"],
    )
    planted_case(name)

def planted_case(name, package = None, **kwargs):
    """The test of a planted package, failing on purpose.

    <name>_test: the planted package <name> (or `package`) checked (by the generic test, or
    by `srcs`). Tagged manual: tools/real_models.sh runs it under DUMP_AOTI_MINIFIER=1.

    Args:
      name: the planted package's name.
      package: the package checked, when not :<name>.
      **kwargs: aoti_model_test's other attributes.
    """
    aoti_model_test(name = name + "_test", size = "large", package = package or ":" + name, tags = ["manual"], **kwargs)

def control_flow_model(name, plants, data = []):
    """A model that is not one straight line, healthy, and with bugs planted.

    Control flow, data-dependent sizes, state written in forward: <name> and <name>_test,
    healthy; for each plant <name>_<plant> and its test, failing on purpose (manual;
    tools/real_models.sh).

    Args:
      name: the model, <name>.py.
      plants: plants of PLANTS, each optionally with "_unnamed" ("relu_accuracy",
        "compile_error_unnamed", ...).
      data: the model's data files.
    """
    aoti_package(name = name, model = name + ".py", data = data)
    aoti_model_test(name = name + "_test", size = "medium", package = ":" + name)
    for plant in plants:
        unnamed = plant.endswith("_unnamed")
        kwargs, configs = PLANTS[plant[:-len("_unnamed")] if unnamed else plant]
        aoti_package(
            name = name + "_" + plant,
            model = name + ".py",
            data = data,
            model_kwargs = kwargs,
            inductor_configs = dict(configs, **UNNAMED) if unnamed else configs,
            tags = ["manual"],
        )
        planted_case(name + "_" + plant)
