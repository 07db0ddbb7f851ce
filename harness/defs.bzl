"""Bazel rules for model repositories: package a Python model for AOTI, test it in C++.

    load("@aoti_harness//harness:defs.bzl", "aoti_package", "aoti_model_test")

    aoti_package(
        name = "mlp",                 # produces mlp.pt2
        model = "mlp.py",             # make_model(), example_inputs(), ... (see README)
        inductor_configs = {"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"},
    )

    aoti_model_test(
        name = "mlp_test",
        package = ":mlp",
        srcs = ["mlp_test.cc"],       # optional: defaults to the harness' generic model test
    )

A package a team ships, made by its own pipeline, is tested as shipped:

    aoti_prebuilt_package(
        name = "classifier",          # produces classifier.pt2, a harness package around it
        pt2 = "shipped/classifier.pt2",   # from aoti_compile_and_package / package_pt2
        program = "shipped/classifier_ep.pt2",   # optional: torch.export.save of its program
        inputs = "shipped/inputs.pt",  # optional: torch.save'd inputs, or a .py with example_inputs()
        inductor_configs = {"max_autotune": "true"},  # what the pipeline compiled with
    )
"""

load("@rules_cc//cc:defs.bzl", "cc_test")

_PYTREE_MODULES_DOC = ("Python modules whose pytree types the program's inputs or outputs use (a transformers " +
                       "ModelOutput: [\"transformers.modeling_outputs\"]). The packager imports these, and only " +
                       "these, to read an exported program; a model file that imports its library needs none.")

def _aoti_package_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".pt2")
    args = ctx.actions.args()
    args.add(ctx.file._tool)
    if (ctx.file.model == None) == (ctx.file.program == None):
        fail("aoti_package %s: give exactly one of model (a Python model file) and program (an exported .pt2)" % ctx.label)
    source = ctx.file.model or ctx.file.program
    args.add("--model" if ctx.file.model else "--program", source)
    args.add("--out", out)
    args.add("--name", ctx.attr.model_name)
    args.add("--label", str(ctx.label))
    args.add("--seed", str(ctx.attr.seed))
    args.add("--inductor-configs", json.encode(ctx.attr.inductor_configs))
    if ctx.attr.model_kwargs:
        args.add("--model-kwargs", json.encode(ctx.attr.model_kwargs))
    if ctx.attr.dtype:
        args.add("--dtype", ctx.attr.dtype)
    if ctx.attr.device:
        args.add("--device", ctx.attr.device)
    for lib in ctx.files.op_libraries:
        args.add("--load-library", lib)
    if ctx.attr.export_only:
        args.add("--export-only")
    if ctx.attr.strict_export:
        args.add("--strict-export")
    if ctx.attr.keep_mode:
        args.add("--keep-mode")

    # An export-only package compiles nothing: its own mnemonic, so that counts of AOTI
    # compiles (tools/ci_phases.sh, --execution_log_json_file) tell the two apart.
    if ctx.attr.export_only:
        return _run_packager(ctx, args, [source], out, "AotiExport", "Exporting %s" % ctx.label)
    return _run_packager(ctx, args, [source], out, "AotiPackage", "AOTI-packaging %s" % ctx.label)

def _run_packager(ctx, args, sources, out, mnemonic, progress_message):
    """Runs tools/package_model.py; the package is the rule's one output."""

    # The action refuses a host (a remote executor) whose CPU ISA is not the key's.
    args.add("--build-key", ctx.file._build_key)
    if ctx.attr.pytree_modules:
        args.add("--pytree-modules", ",".join(ctx.attr.pytree_modules))

    # A persistent worker (tools/package_worker.py) imports torch once and forks a child per
    # action; the action's arguments travel in its param file (Bazel: the arguments before
    # it start the worker, the file is the request). The packager's own files are
    # the worker's tools: a change to them starts new workers.
    worker = ctx.actions.args()
    worker.add(ctx.file._worker)
    if mnemonic == "AotiPackage":
        # Its workers compile once at start, so that every action's compile starts warm.
        worker.add("--warm-up")
    args.use_param_file("@%s", use_always = True)
    args.set_param_file_format("multiline")
    ctx.actions.run(
        executable = ctx.file._python,
        arguments = [worker, args],
        # The build key (torch version, host CPU ISA, compiler) is an input so that a
        # cache never serves a package built by another torch or for another host.
        inputs = sources + [ctx.file._build_key] + ctx.files.data + ctx.files.op_libraries,
        tools = [ctx.file._worker, ctx.file._tool] + ctx.files._tool_module,
        outputs = [out],
        mnemonic = mnemonic,
        progress_message = progress_message,
        use_default_shell_env = True,
        execution_requirements = {"supports-workers": "1"},
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

aoti_package = rule(
    implementation = _aoti_package_impl,
    doc = "Exports a Python model, AOTI-compiles it, and writes one <name>.pt2 archive " +
          "(program, weights, compiled model, sample inputs, eager outputs). A compile " +
          "failure is recorded in the archive instead of failing the build.",
    attrs = {
        "model": attr.label(allow_single_file = [".py"], doc = "Python model file following the model file contract."),
        "program": attr.label(allow_single_file = [".pt2"], doc = "Or: an exported program archive with sample inputs (a reducer's repro.pt2), compiled as it is."),
        "data": attr.label_list(allow_files = True, doc = "Files the model file reads."),
        "op_libraries": attr.label_list(allow_files = [".so"], doc = "Shared libraries of C++ custom operators (TORCH_LIBRARY) to load before the model file."),
        "pytree_modules": attr.string_list(doc = _PYTREE_MODULES_DOC),
        "model_name": attr.string(default = "model", doc = "Model name inside the archive (tests find it from the package; any name works)."),
        "inductor_configs": attr.string_dict(doc = "Inductor config patches; values that parse as JSON (true, 1, 0.5) are typed."),
        "model_kwargs": attr.string_dict(doc = "Keyword arguments for make_model(); values that parse as JSON are typed. One model file, several configurations (e.g. {\"act\": \"relu\"})."),
        "dtype": attr.string(doc = "Cast the model and its floating inputs to this dtype before export (e.g. \"bfloat16\")."),
        "device": attr.string(doc = "Move the model and its inputs to this device before export (\"cuda\"): the package is compiled for it. Building one needs that device, so tag such targets requires-gpu (.bazelrc leaves them out of builds and tests without --config=cuda)."),
        "export_only": attr.bool(default = False, doc = "Skip the AOTI compile (program + inputs only)."),
        "strict_export": attr.bool(default = False, doc = "torch.export in strict mode."),
        "keep_mode": attr.bool(default = False, doc = "Export the module in the mode make_model() returned it. By default the packager calls model.eval() first (and says so in the build log when the module was in training mode): AOTI serves models for inference, with dropout off and batch norm's running statistics."),
        "seed": attr.int(default = 0, doc = "torch.manual_seed before make_model() and example_inputs()."),
        "_tool": attr.label(default = Label("//tools:package_model.py"), allow_single_file = True),
        "_tool_module": attr.label(default = Label("//tools:package_model_lib")),
        "_worker": attr.label(default = Label("//tools:package_worker.py"), allow_single_file = True),
        "_python": attr.label(default = Label("@torch//:python"), allow_single_file = True),
        "_build_key": attr.label(default = Label("@torch//:aoti_build_key.json"), allow_single_file = True),
    },
)

def _aoti_prebuilt_package_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".pt2")
    args = ctx.actions.args()
    args.add(ctx.file._tool)
    args.add("--prebuilt", ctx.file.pt2)
    args.add("--label", str(ctx.attr.pt2.label))
    sources = [ctx.file.pt2]
    if ctx.file.program:
        args.add("--exported-program", ctx.file.program)
        args.add("--label-program", str(ctx.attr.program.label))
        sources.append(ctx.file.program)
    if ctx.file.inputs:
        args.add("--inputs", ctx.file.inputs)
        args.add("--label-inputs", str(ctx.attr.inputs.label))
        sources.append(ctx.file.inputs)
    args.add("--out", out)
    if ctx.attr.model_name:
        args.add("--name", ctx.attr.model_name)
    args.add("--seed", str(ctx.attr.seed))
    args.add("--inductor-configs", json.encode(ctx.attr.inductor_configs))
    for lib in ctx.files.op_libraries:
        args.add("--load-library", lib)
    return _run_packager(ctx, args, sources, out, "AotiPrebuiltPackage", "Bringing in the shipped package %s" % ctx.label)

aoti_prebuilt_package = rule(
    implementation = _aoti_prebuilt_package_impl,
    doc = "A harness package around a .pt2 a team shipped (aoti_compile_and_package's): the compiled " +
          "model kept byte for byte, never recompiled to be checked; the exported program, inputs and " +
          "eager outputs beside it. aoti_model_test checks it as it checks an aoti_package; the reducer " +
          "compiles candidates with `inductor_configs`, and says so plainly when a fresh compile of the " +
          "whole program does not fail as the shipped one does.",
    attrs = {
        "pt2": attr.label(mandatory = True, allow_single_file = [".pt2"], doc = "The shipped .pt2 (aoti_compile_and_package, or package_pt2 with aoti_files)."),
        "program": attr.label(allow_single_file = [".pt2"], doc = "The exported program it was compiled from (torch.export.save); default: the shipped archive's own models/<name>.json."),
        "inputs": attr.label(allow_single_file = [".pt", ".pth", ".py"], doc = "Inputs: a torch.save file (a tensor, a tuple of tensors, a dict of keyword tensors, or an (args, kwargs) pair), or a Python file with example_inputs() (and example_kwargs()); default: the program's example inputs."),
        "model_name": attr.string(doc = "The model of the shipped archive under test (default: its only one); the package keeps the name."),
        "inductor_configs": attr.string_dict(doc = "The inductor configs the pipeline compiled with; the reducer compiles candidates with them. Values that parse as JSON are typed."),
        "op_libraries": attr.label_list(allow_files = [".so"], doc = "Shared libraries of C++ custom operators the program calls."),
        "pytree_modules": attr.string_list(doc = _PYTREE_MODULES_DOC),
        "data": attr.label_list(allow_files = True, doc = "Files the inputs file reads."),
        "seed": attr.int(default = 0, doc = "Recorded in the manifest."),
        "_tool": attr.label(default = Label("//tools:package_model.py"), allow_single_file = True),
        "_tool_module": attr.label(default = Label("//tools:package_model_lib")),
        "_worker": attr.label(default = Label("//tools:package_worker.py"), allow_single_file = True),
        "_python": attr.label(default = Label("@torch//:python"), allow_single_file = True),
        "_build_key": attr.label(default = Label("@torch//:aoti_build_key.json"), allow_single_file = True),
    },
)

def aoti_model_test(name, package = None, packages = {}, srcs = None, deps = [], args = [], data = [], op_libraries = [], shapes = {}, pytree_modules = [], python_imports = [], **kwargs):
    """A cc_test of an aoti_package, with the isolated runner and the reducer's listener.

    The test gets --aoti_package=<path>; the listener reduces a failure with
    DUMP_AOTI_MINIFIER=1 or --aoti_reduce_on_failure. With no srcs it runs the harness'
    generic test: EXPECT_AOTI_MATCHES_EAGER on the sample inputs of each package. A package
    with dynamic dimensions is also checked at its ranges' minimum and maximum, and at sizes
    no two dynamic dimensions share.

    Args:
      name: the test's name.
      package: the aoti_package under test (aoti::PackageUnderTest()). Give package,
        packages, or both.
      packages: more of them by key, {"small": ":m_small", "large": ":m_large"}, for a test
        that checks a model at several shapes or checkpoints (aoti::PackageUnderTest("small")).
      srcs: the test's own sources (default: the generic test).
      deps: more dependencies of the test.
      args: more arguments of the test.
      data: more runfiles of the test.
      op_libraries: shared libraries of custom operators the compiled model calls (loaded
        into the runner child process).
      shapes: more shapes for the generic test, {"long": "2x64/2x64"} (each user input's
        sizes separated by '/', dimensions by 'x'), each a test of its own
        (AotiModelShapes.long).
      pytree_modules: the Python modules whose pytree types the package's program uses (as
        its aoti_package or aoti_prebuilt_package declares them): the reducer's compile
        server and repro.py import these, and only these, to read the program.
      python_imports: for a model that calls operators written only in Python (a custom_op
        with no C++ kernel), what defines them: module names ("transformers.integrations.moe")
        or labels of .py files. Given, the compiled model runs in a Python child that imports
        them first and is judged against the eager and float64 outputs Python recorded when
        the package was built (its sample inputs only; a failure is not reduced). Not given,
        such a model fails as "not supported", named before anything runs.
      **kwargs: shard_count and the other cc_test attributes (the test main honours Bazel's
        sharding).
    """
    if not package and not packages:
        fail("aoti_model_test %s: give package (an aoti_package) or packages ({key: aoti_package})" % name)
    for key in packages:
        if not key or "=" in key or "," in key:
            fail("aoti_model_test %s: packages key '%s': expected a non-empty name without '=' or ','" % (name, key))
    lib_args = ["--aoti_op_libraries=" + ",".join(["$(rootpath %s)" % lib for lib in op_libraries])] if op_libraries else []
    for shape in shapes:
        if not shape or "=" in shape or "," in shape:
            fail("aoti_model_test %s: shapes key '%s': expected a name of letters, digits and '_'" % (name, shape))
    shape_args = ["--aoti_shapes=" + ",".join(["%s=%s" % (k, shapes[k]) for k in shapes])] if shapes else []
    pytree_args = ["--aoti_pytree_modules=" + ",".join(pytree_modules)] if pytree_modules else []
    python_files = [p for p in python_imports if p.endswith(".py")]
    python_args = ["--aoti_python_imports=" + ",".join([
        "$(rootpath %s)" % p if p.endswith(".py") else p
        for p in python_imports
    ])] if python_imports else []
    package_args = ["--aoti_package=$(rootpath %s)" % package] if package else []
    if packages:
        package_args.append("--aoti_packages=" + ",".join(["%s=$(rootpath %s)" % (key, packages[key]) for key in packages]))
    cc_test(
        name = name,
        srcs = srcs or [],
        deps = deps + [
            Label("//plugin:model_test_main"),
            Label("//matchers:aoti_matches_eager"),
            Label("//plugin:reduce_listener"),
        ] + ([] if srcs else [Label("//plugin:generic_model_test")]),
        data = data + op_libraries + python_files + ([package] if package else []) + [packages[key] for key in packages] + [
            Label("//harness/runner:aoti_runner"),
            Label("//tools:python_runner.py"),
            Label("//tools:compile_server.py"),
            Label("//tools:package_model.py"),
            Label("//tools:package_model_lib"),
            Label("//tools:aoti_aten_fallbacks.py"),
            Label("//tools:remote_compile_cache.py"),
            Label("//reducer:repro/standalone.py"),
            Label("@torch//:python"),
        ],
        args = args + package_args + [
            "--aoti_runner=$(rootpath %s)" % Label("//harness/runner:aoti_runner"),
            "--aoti_python=$(rootpath %s)" % Label("@torch//:python"),
            "--aoti_compile_server=$(rootpath %s)" % Label("//tools:compile_server.py"),
            "--aoti_standalone_script=$(rootpath %s)" % Label("//reducer:repro/standalone.py"),
            "--aoti_python_runner_script=$(rootpath %s)" % Label("//tools:python_runner.py"),
        ] + lib_args + shape_args + pytree_args + python_args,
        **kwargs
    )
