"""Repository rules that bring aoti_harness' dependencies in from this machine, offline.

A model repository that depends on aoti_harness calls `aoti_harness_dependencies()` from
its WORKSPACE after declaring `local_repository(name = "aoti_harness", ...)`.

- `@torch`: libtorch (headers, libtorch.so, libtorch_cpu.so, libc10.so, and with a CUDA
  build of torch libtorch_cuda.so and libc10_cuda.so) and the Python interpreter of the
  project's virtualenv, both found by asking that Python for `torch.__path__`. With
  `--repo_env=AOTI_TORCH=cuda` (`bazel build --config=cuda`) it is the CUDA virtualenv's
  torch instead (`AOTI_CUDA_PYTHON`, else ~/.cache/aoti_harness/venv-cuda, made by
  `bash tools/setup.sh --cuda`), and a CPU-only torch there is an error.
- `@system_libs`: GoogleTest, GoogleMock, gflags, glog and nlohmann-json from Debian.
"""

_SETUP_HINT = "Run `bash tools/setup.sh` in the aoti_harness checkout (it creates ~/.cache/aoti_harness/venv with torch==2.13.0), or point AOTI_PYTHON at a Python that has torch."

_CUDA_HINT = "Run `bash tools/setup.sh --cuda` in the aoti_harness checkout (it creates ~/.cache/aoti_harness/venv-cuda with a CUDA build of torch), or point AOTI_CUDA_PYTHON at a Python whose torch is a CUDA build."

def _wants_cuda(rctx):
    variant = rctx.os.environ.get("AOTI_TORCH", "cpu")
    if variant not in ["cpu", "cuda"]:
        fail("aoti_harness: AOTI_TORCH=%s: expected cpu (the default) or cuda" % variant)
    return variant == "cuda"

def _candidate_pythons(rctx):
    if _wants_cuda(rctx):
        env = rctx.os.environ.get("AOTI_CUDA_PYTHON", "")
        if env:
            return [env], "AOTI_CUDA_PYTHON"
        home = rctx.os.environ.get("HOME", "")
        cache = rctx.os.environ.get("XDG_CACHE_HOME", home + "/.cache")
        return [cache + "/aoti_harness/venv-cuda/bin/python"], "AOTI_TORCH=cuda: the CUDA virtualenv"
    env = rctx.os.environ.get("AOTI_PYTHON", "")
    if env:
        return [env], "AOTI_PYTHON"
    cands = []
    home = rctx.os.environ.get("HOME", "")
    cache = rctx.os.environ.get("XDG_CACHE_HOME", home + "/.cache")
    cands.append(cache + "/aoti_harness/venv/bin/python")
    for label in [Label("@//:WORKSPACE"), Label("//:WORKSPACE")]:
        root = str(rctx.path(label).dirname)
        p = root + "/.venv/bin/python"
        if p not in cands:
            cands.append(p)
    return cands, "the set-up's virtualenv or a .venv in the workspace"

_PROBE = """
import json, os, sys
import torch
print(json.dumps({
    "torch_dir": os.path.dirname(torch.__file__),
    "version": torch.__version__,
    "git_version": getattr(torch.version, "git_version", "unknown"),
    "cuda": torch.version.cuda,
    "cxx11_abi": bool(torch._C._GLIBCXX_USE_CXX11_ABI),
    "python": sys.executable,
}))
"""

def _torch_repository_impl(rctx):
    cands, origin = _candidate_pythons(rctx)
    python = None
    for c in cands:
        if rctx.path(c).exists:
            python = c
            break
    hint = _CUDA_HINT if _wants_cuda(rctx) else _SETUP_HINT
    if python == None:
        fail("aoti_harness: no Python found (looked for %s via %s). %s" % (", ".join(cands), origin, hint))
    res = rctx.execute([python, "-c", _PROBE], timeout = 300, quiet = True)
    if res.return_code != 0:
        fail("aoti_harness: `%s` cannot import torch:\n%s\n%s" % (python, res.stderr[-2000:], _SETUP_HINT))
    info = json.decode(res.stdout.strip().splitlines()[-1])
    torch_dir = info["torch_dir"]
    lib = torch_dir + "/lib"
    if _wants_cuda(rctx) and not info["cuda"]:
        fail("aoti_harness: AOTI_TORCH=cuda (--config=cuda), and torch %s at %s is a CPU-only build. %s" % (info["version"], torch_dir, _CUDA_HINT))

    # A CUDA build of torch: libtorch_cuda registers the CUDA AOTI runner and the CUDA
    # kernels, so it is linked explicitly (with --no-as-needed, as nothing names it). A
    # CUDA torch is linked by -l and the absolute rpath only, with no Bazel sources:
    # loaded through Bazel's _solib symlinks, the libraries' $ORIGIN-relative runpaths
    # would miss the wheel's nvidia/*/lib folders (libtorch_nvshmem, cuDNN, ...).
    cuda_libs = ["libtorch_cuda.so", "libc10_cuda.so"] if info["cuda"] else []
    for so in ["libtorch.so", "libtorch_cpu.so", "libc10.so"] + cuda_libs:
        if not rctx.path(lib + "/" + so).exists:
            fail("aoti_harness: %s/%s is missing; the torch install at %s has no libtorch. %s" % (lib, so, torch_dir, _SETUP_HINT))
    rctx.symlink(torch_dir + "/include", "include")
    rctx.symlink(lib, "lib")
    rctx.file("python", "#!/bin/sh\nexec '%s' \"$@\"\n" % info["python"], executable = True)
    rctx.file("torch_info.bzl", "\n".join([
        "TORCH_VERSION = %r" % info["version"],
        "TORCH_GIT_VERSION = %r" % info["git_version"],
        "TORCH_CUDA_VERSION = %r" % info["cuda"],
        "TORCH_DIR = %r" % torch_dir,
        "PYTHON = %r" % info["python"],
        "",
    ]))

    # What an AOTI package depends on besides its sources: the torch build, the host's
    # CPU ISA (AOTI compiles for the host's vector extensions) and the C++ compiler. An
    # input of every aoti_package action, so a disk or remote cache never serves a
    # package built for another torch, another host ISA or another compiler.
    cpu_flags = []
    cpuinfo = rctx.execute(["cat", "/proc/cpuinfo"], quiet = True)
    for line in cpuinfo.stdout.splitlines():
        if line.startswith("flags"):
            have = [f for f in line.split(":", 1)[1].replace("\t", " ").split(" ") if f]
            cpu_flags = sorted([f for f in have if f.startswith("avx") or f.startswith("amx") or f in ["sse4_2", "fma", "f16c"]])
            break
    cxx = rctx.os.environ.get("CXX", "g++")
    cxx_version = rctx.execute([cxx, "--version"], quiet = True).stdout.splitlines()
    rctx.file("aoti_build_key.json", json.encode_indent({
        "torch_version": info["version"],
        "torch_git_version": info["git_version"],
        "torch_cuda_version": info["cuda"],
        "cpu_isa_flags": cpu_flags,
        "cxx": cxx_version[0] if cxx_version else "unknown",
    }) + "\n")
    abi = "1" if info["cxx11_abi"] else "0"
    rctx.file("BUILD.bazel", """
package(default_visibility = ["//visibility:public"])

exports_files(["python", "torch_info.bzl", "aoti_build_key.json"])

# libtorch from the torch wheel. The shared libraries are linked by absolute path with an
# absolute rpath, so binaries run from bazel-bin or by hand without LD_LIBRARY_PATH, and
# libtorch's own $ORIGIN-relative dependencies (libgomp) resolve next to the real files.
cc_library(
    name = "libtorch",
    hdrs = glob(["include/**/*.h", "include/**/*.hpp", "include/**/*.cuh"]),
    includes = ["include", "include/torch/csrc/api/include"],
    defines = ["_GLIBCXX_USE_CXX11_ABI={abi}"],
    copts = ["-Wno-c++20-extensions", "-Wno-deprecated-declarations", "-Wno-unused-parameter"],
    linkopts = [
        "-L{lib}",
        "-Wl,-rpath,{lib}",
        "-Wl,--no-as-needed",
        "-ltorch",
        "-ltorch_cpu",
        "-lc10",
    ] + {cuda_linkopts},
    srcs = {srcs},
)

filegroup(
    name = "python_tool",
    srcs = ["python"],
)
""".format(
        lib = lib,
        abi = abi,
        cuda_linkopts = repr(["-l" + so[3:-3] for so in cuda_libs]),
        srcs = repr([] if cuda_libs else ["lib/libtorch.so", "lib/libtorch_cpu.so", "lib/libc10.so"]),
    ))

torch_repository = repository_rule(
    implementation = _torch_repository_impl,
    environ = ["AOTI_PYTHON", "AOTI_TORCH", "AOTI_CUDA_PYTHON", "CXX", "HOME", "XDG_CACHE_HOME"],
    local = True,
    doc = "libtorch and the Python interpreter from the project's torch install.",
)

# A WORKSPACE macro: it declares repositories, not targets, so it takes no name.
# buildifier: disable=unnamed-macro
def aoti_harness_dependencies():
    """Declares @torch, @system_libs and the offline Bazel rule stand-ins."""
    torch_repository(name = "torch")
    native.new_local_repository(
        name = "system_libs",
        path = "/usr",
        build_file = str(Label("//third_party:system_libs.BUILD")),
    )
