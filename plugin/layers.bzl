"""core_layer_test: every library of the calling package links no gtest and reads no gflags."""

def core_layer_test(name, exclude = [], forbidden = "gtest,gflags"):
    """Checks the symbols of every non-testonly cc_library with sources in this package.

    Call it last in a BUILD file: it lists the libraries declared above it, so a library
    added later is checked without being named here.

    Args:
      name: the sh_test's name.
      exclude: library names left out (none in the core today).
      forbidden: what the libraries must not link (comma-separated: gtest, gflags).
    """
    libraries = []
    for rule in native.existing_rules().values():
        if rule["kind"] != "cc_library" or rule.get("testonly") or rule["name"] in exclude:
            continue
        if [s for s in rule.get("srcs", []) if s.endswith(".cc")]:
            libraries.append(":" + rule["name"])

    # A filegroup carries the libraries' archives into the runfiles (a cc_library in data
    # carries only its runfiles, and the archives nm reads are not among them).
    native.filegroup(
        name = name + "_libraries",
        srcs = sorted(libraries),
        testonly = True,
    )
    native.sh_test(
        name = name,
        size = "small",
        srcs = [Label("//plugin:layer_symbols_test.sh")],
        args = [forbidden, "$(rootpaths :%s_libraries)" % name],
        data = [":" + name + "_libraries"],
    )
