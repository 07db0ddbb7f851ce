"""precompiled_header: one header, compiled once with the C++ toolchain's own flags.

The rule copies `src` into the output tree as `out` and, with gcc, compiles it beside itself
as `out`.gch (and writes `stamp`, a comment holding the .gch's digest), with exactly the
command line the toolchain gives a C++ compile in this configuration (its features, --copt
and --cxxopt, the deps' include paths and defines, position-independent code like the
libraries' objects). It provides the files as headers and the deps' compilation context, but
no linking: a target that depends on it and is compiled with `-include <out> -include
<stamp>` (harness/cc.bzl) has gcc load the precompiled header instead of parsing its text.
gcc uses the .gch only when the translation unit's options match (-Winvalid-pch names a
mismatch) and parses the text otherwise, so a mismatch costs time, never correctness. With
another compiler (clang in --config=fuzz), or with --define=aoti_pch=off, `out` and `stamp`
are empty headers and no .gch is made.

gcc's dependency file (-MD) never lists a precompiled header it used, so Bazel, which keeps
an object's inputs to those the dependency file lists, would not recompile it when the .gch
changes; the stamp, read as text, is listed, and changes with the .gch.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")
load("@rules_cc//cc/common:cc_common.bzl", "cc_common")
load("@rules_cc//cc/common:cc_info.bzl", "CcInfo")

def _precompiled_header_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    deps = cc_common.merge_cc_infos(cc_infos = [d[CcInfo] for d in ctx.attr.deps])
    deps_context = deps.compilation_context
    header = ctx.actions.declare_file(ctx.attr.out)
    stamp = ctx.actions.declare_file(ctx.attr.stamp)
    headers = [header, stamp]
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    action = "c++-compile"
    compiler = cc_common.get_tool_for_action(feature_configuration = feature_configuration, action_name = action)

    # The auto-configured toolchain names every compiler "compiler": gcc is told by its path.
    compiler_name = compiler.split("/")[-1]
    if ctx.attr.enabled and ("gcc" in compiler_name or "g++" in compiler_name):
        ctx.actions.expand_template(template = ctx.file.src, output = header, substitutions = {})
        gch = ctx.actions.declare_file(ctx.attr.out + ".gch")
        variables = cc_common.create_compile_variables(
            cc_toolchain = cc_toolchain,
            feature_configuration = feature_configuration,
            source_file = header.path,
            output_file = gch.path,
            user_compile_flags = ctx.fragments.cpp.copts + ctx.fragments.cpp.cxxopts,
            include_directories = deps_context.includes,
            # The repository's root first, for `hdrs` included by their workspace path.
            quote_include_directories = depset([ctx.label.workspace_root or "."], transitive = [deps_context.quote_includes]),
            system_include_directories = deps_context.system_includes,
            preprocessor_defines = deps_context.defines,
            use_pic = True,
        )
        ctx.actions.run(
            executable = compiler,
            arguments = ["-x", "c++-header"] + cc_common.get_memory_inefficient_command_line(
                feature_configuration = feature_configuration,
                action_name = action,
                variables = variables,
            ),
            env = cc_common.get_environment_variables(
                feature_configuration = feature_configuration,
                action_name = action,
                variables = variables,
            ),
            inputs = depset([header] + ctx.files.hdrs, transitive = [deps_context.headers, cc_toolchain.all_files]),
            outputs = [gch],
            mnemonic = "CppPrecompileHeader",
            progress_message = "Precompiling %s" % header.short_path,
        )
        headers.append(gch)
        ctx.actions.run_shell(
            inputs = [gch],
            outputs = [stamp],
            command = 'echo "// $(sha256sum < "$1" | cut -d" " -f1)" > "$2"',
            arguments = [gch.path, stamp.path],
            mnemonic = "CppPrecompiledHeaderStamp",
            progress_message = "Stamping %s" % gch.short_path,
        )
    else:
        for empty in (header, stamp):
            ctx.actions.write(empty, "// The precompiled header is off in this configuration.\n")
    context = cc_common.create_compilation_context(headers = depset(headers))
    return [
        DefaultInfo(files = depset(headers)),
        cc_common.merge_cc_infos(cc_infos = [
            CcInfo(compilation_context = context),
            CcInfo(compilation_context = deps_context),
        ]),
    ]

precompiled_header = rule(
    implementation = _precompiled_header_impl,
    doc = "Copies `src` to `out` and precompiles it with the C++ toolchain's flags (gcc only).",
    attrs = {
        "deps": attr.label_list(providers = [CcInfo], doc = "Libraries whose headers `src` includes."),
        "enabled": attr.bool(default = True, doc = "False: `out` is an empty header."),
        "hdrs": attr.label_list(allow_files = [".h"], doc = "Headers of this repository `src` includes, by their path in it."),
        "out": attr.string(mandatory = True, doc = "The header's path in the package, as -include names it."),
        "stamp": attr.string(mandatory = True, doc = "A header holding the .gch's digest: -include it after `out`."),
        "src": attr.label(allow_single_file = [".h"], mandatory = True, doc = "The header to precompile."),
        "_cc_toolchain": attr.label(default = Label("@bazel_tools//tools/cpp:current_cc_toolchain")),
    },
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)
