"""The module extension behind MODULE.bazel (bzlmod, Bazel 7 and later): the same two
repositories that aoti_harness_dependencies() declares under WORKSPACE. Written for those
versions and not run here (only Bazel 4.2.3 is available)."""

load("@bazel_tools//tools/build_defs/repo:local.bzl", "new_local_repository")
load(":repositories.bzl", "torch_repository")

def _aoti_harness_impl(_module_ctx):
    torch_repository(name = "torch")
    new_local_repository(
        name = "system_libs",
        path = "/usr",
        build_file = Label("//third_party:system_libs.BUILD"),
    )

aoti_harness = module_extension(
    implementation = _aoti_harness_impl,
    doc = "@torch and @system_libs for aoti_harness under bzlmod.",
)
