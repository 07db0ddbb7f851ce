#!/usr/bin/env python3
"""compile_server: a persistent AOTI compile process for the reducer.

torch is imported once; requests are JSON lines on stdin, answers JSON lines on a
dedicated descriptor (--answer-fd N; stdout when not given). --precompiled-headers DIR
keeps inductor's precompiled headers in DIR across runs. Whatever torch or a native
library prints, on stdout or stderr, goes to the log and cannot corrupt an answer.
Every answer carries its request's id, errors included. Requests:

  {"id": 1, "op": "compile", "program": "cand.pt2", "out": "cand_aoti.pt2",
   "inductor_configs": {"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"},
   "op_libraries": ["libmyops.so"]}
  {"id": 2, "op": "ping"}
  {"id": 3, "op": "shutdown"}

One key of the reducer's own is read here and never reaches inductor or a repro:
"aoti_harness.one_kernel_per_node": true compiles every node into a kernel of its own (its
value realized into a buffer, no fusion, one kernel function per scheduled node), the
reducer's diagnostic compile that splits a fused kernel (OneKernelPerNode).

`program` is a candidate archive written by the reducer: a torch.export program
(models/model.json + weights) with its inputs as raw tensors (extra/aoti_harness/
package.json + aoti_harness/tensors/). The server adds upstream's sample inputs, loads it
(package_model.load_program), compiles it with aoti_compile_and_package, and writes `out`: the
program, inputs and compiled model in one archive (the model keeps the name the
candidate's manifest gives it), or, when the compile fails, the
program and inputs with the failure recorded in the manifest, as package_model does.

Answers: {"id", "ok", "phase" ("load" | "compile" | "done"), "seconds", "out",
          "error": {"type", "message", "compiler_errors", "traceback"}}.
"""

import contextlib
import io
import json
import os
import sys
import tempfile
import time
import traceback
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
warnings.filterwarnings("ignore", category=FutureWarning)

import package_model  # noqa: E402  (after the environment is set)


ONE_KERNEL_PER_NODE = "aoti_harness.one_kernel_per_node"


class OneKernelPerNode:
    """For one compile, every node of the graph inductor lowers gets a kernel of its own: its
    value is realized into a buffer (never inlined into the next node's loop), nothing is
    fused (max_fusion_size 1, in the configs), and the C++ backend ends its kernel function
    after each scheduled node (it otherwise groups consecutive loops into one function).
    The compiler's first error, the kernel that crashed or never finished, then names one
    node. Inductor's classes are put back when the compile ends."""

    def __enter__(self):
        from torch._inductor import ir
        from torch._inductor.codegen.cpp import CppScheduling
        from torch._inductor.graph import GraphLowering

        self.run_node, self.args = GraphLowering.run_node, CppScheduling.MAX_FUSED_KERNEL_ARGS_NUM

        def run_node(graph, n, _original=self.run_node):
            result = _original(graph, n)
            if n.op == "call_function":
                for r in result if isinstance(result, (list, tuple)) else [result]:
                    if isinstance(r, ir.TensorBox):
                        r.realize()
            return result

        GraphLowering.run_node = run_node
        CppScheduling.MAX_FUSED_KERNEL_ARGS_NUM = 0  # flushed after every node
        return self

    def __exit__(self, *exc):
        from torch._inductor.codegen.cpp import CppScheduling
        from torch._inductor.graph import GraphLowering

        GraphLowering.run_node, CppScheduling.MAX_FUSED_KERNEL_ARGS_NUM = self.run_node, self.args
        return False


def one_kernel_per_node(configs):
    """Pops the reducer's key from configs: the context for the compile, and the configs it
    needs (no fusion, inductor's caches off: they do not know of the context)."""
    wanted = configs.pop(ONE_KERNEL_PER_NODE, False)
    if wanted not in (True, False):
        raise package_model.ContractError(f"inductor_configs[{ONE_KERNEL_PER_NODE!r}] = {wanted!r}: expected true or false")
    if not wanted:
        return contextlib.nullcontext()
    configs.update(max_fusion_size=1, force_disable_caches=True)
    return OneKernelPerNode()


def read_inputs(path):
    """The candidate's flat inputs from its harness manifest and raw tensors."""
    from torch.export.pt2_archive._package import PT2ArchiveReader

    r = PT2ArchiveReader(path)
    manifest = package_model.read_manifest(r.read_string(package_model.EXTRA_DIR + "package.json"), path)
    tensors = []
    for rec in manifest["inputs"]:
        data = r.read_bytes(package_model.TENSOR_DIR + rec["file"])
        # On the device it was recorded on: a CUDA program compiles with CUDA inputs.
        t = package_model.read_raw_tensor(rec, data)
        tensors.append(package_model.on_recorded_device(t, rec, f"{path}: input"))
    return manifest, tensors


LOADED_LIBRARIES = set()


def compile_request(req, workdir):
    import torch

    start = time.time()
    answer = {"id": req.get("id"), "out": req.get("out")}

    def failed(phase, e):
        answer.update(ok=False, phase=phase, seconds=round(time.time() - start, 3),
                      error={"type": f"{type(e).__module__}.{type(e).__qualname__}", "message": str(e),
                             "compiler_errors": "", "traceback": traceback.format_exc()})
        return answer

    try:
        for lib in req.get("op_libraries", []):
            if lib not in LOADED_LIBRARIES:
                torch.ops.load_library(lib)
                LOADED_LIBRARIES.add(lib)
        program, out = req["program"], req["out"]
        configs = {k: package_model.parse_config_value(v) for k, v in req.get("inductor_configs", {}).items()}
        split = one_kernel_per_node(configs)
        package_model.split_configs(configs)  # the harness's own keys, checked before any work
        manifest, inputs = read_inputs(program)
        # The candidate's model, by the name the package gave it (not always "model").
        name = manifest["model_name"]
        buf = io.BytesIO()
        torch.save((tuple(inputs), {}), buf)
        loadable = os.path.join(workdir, "candidate.pt2")
        package_model.merge_archives(loadable, [program], {f"data/sample_inputs/{name}.pt": buf.getvalue()}, workdir)
        ep = package_model.load_program(loadable, name, "candidate", req.get("pytree_modules", []))
    except Exception as e:
        return failed("load", e)
    answer["load_seconds"] = round(time.time() - start, 3)
    aoti_pt2 = os.path.join(workdir, "aoti.pt2")
    with split:
        record = package_model.compile_aoti(ep, configs, aoti_pt2)
    answer["compile_seconds"] = record["seconds"]
    # Inductor's provenance record (asked for by trace.provenance_tracking_level) goes to the
    # reducer, not into the candidate's manifest.
    if "kernel_information" in record:
        answer["kernel_information"] = record.pop("kernel_information")
    try:
        manifest["compile"] = record
        manifest["inductor_configs"] = configs
        package_model.merge_archives(
            out, [loadable] + ([package_model.compiled_as(aoti_pt2, name)] if record["status"] == "ok" else []),
            {package_model.EXTRA_DIR + "package.json": package_model.manifest_bytes(manifest)},
            workdir)
    except Exception as e:
        return failed("write", e)
    answer.update(ok=record["status"] == "ok", phase="done" if record["status"] == "ok" else "compile",
                  seconds=round(time.time() - start, 3))
    if record["status"] != "ok":
        answer["error"] = record["error"]
    return answer


def flag_value(argv, name):
    """The value of --name V or --name=V in argv, else None."""
    value = None
    for k, arg in enumerate(argv):
        if arg == name and k + 1 < len(argv):
            value = argv[k + 1]
        elif arg.startswith(name + "="):
            value = arg.split("=", 1)[1]
    return value


def answer_stream(argv):
    """The answers' stream: --answer-fd N, else stdout. stdout itself then goes to stderr."""
    fd = flag_value(argv, "--answer-fd")
    if fd is None:
        return os.fdopen(os.dup(1), "w")  # the original stdout, before fd 1 goes to the log
    try:
        return os.fdopen(int(fd), "w")
    except (ValueError, OSError) as e:
        print(f"compile_server: --answer-fd {fd!r}: expected an open descriptor number ({e})", file=sys.stderr)
        sys.exit(2)


def private_inductor_cache():
    """Each server compiles into an inductor cache of its own, removed when it exits.

    Inductor's default cache (/tmp/torchinductor_<user>) is shared by every process on
    the machine. Two servers compiling the same graph at once (two test shards reducing
    alike programs, two model tests under bazel test --jobs=2) then have g++ write the same
    .so path, and one of them loads a half-written library. The reducer keeps compiles
    across runs in its own disk cache (reducer/compile_cache.h) instead."""
    import atexit
    import shutil

    path = tempfile.mkdtemp(prefix="aoti_compile_server_")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(path, "inductor_cache")
    atexit.register(shutil.rmtree, path, True)
    return os.environ["TORCHINDUCTOR_CACHE_DIR"]


def log(message):
    """One line of progress in the server's log (its stderr)."""
    print(f"compile_server: {message}", file=sys.stderr, flush=True)


def share_precompiled_headers(directory):
    """Inductor keeps the headers it precompiles (two of about 140 MB, 13 s to build here)
    in <tempdir>/torchinductor_<user>/precompiled_headers, whatever TORCHINDUCTOR_CACHE_DIR
    says, and this server's tempdir is its own. That place becomes a link to `directory`,
    kept across runs and shared by servers (inductor locks it, and names each header by
    compiler, flags and preprocessed text), so the headers are built once, not once per
    server. On any problem the server builds its own, as before."""
    try:
        from torch._inductor.runtime.cache_dir_utils import default_cache_dir

        os.makedirs(directory, exist_ok=True)
        link = os.path.join(default_cache_dir(), "precompiled_headers")
        os.makedirs(os.path.dirname(link), exist_ok=True)
        if not os.path.lexists(link):
            os.symlink(os.path.abspath(directory), link)
        log(f"precompiled headers: {directory}")
    except Exception as e:
        log(f"precompiled headers are not shared ({type(e).__name__}: {e}); this server builds its own")


def main(argv=None):
    started = time.time()
    argv = sys.argv[1:] if argv is None else argv
    inductor_cache = private_inductor_cache()  # before torch is imported
    import torch

    log(f"torch {torch.__version__} imported in {time.time() - started:.1f} s")
    if flag_value(argv, "--precompiled-headers"):
        share_precompiled_headers(flag_value(argv, "--precompiled-headers"))

    out = answer_stream(argv)
    # The host's vector ISAs, probed once (inductor compiles a test program per ISA, about
    # 8 s here): every compile needs them, and probed before the first request is read,
    # they cost nothing when the client started this server ahead of its first compile.
    probe = time.time()
    try:
        pch = flag_value(argv, "--precompiled-headers")
        isas = package_model.probe_vector_isas(os.path.join(os.path.dirname(os.path.abspath(pch)), "vector_isas")
                                               if pch else None)
        log(f"vector ISAs probed in {time.time() - probe:.1f} s: {' '.join(isas) or 'none'}")
    except Exception as e:  # the first compile probes again and reports what fails
        log(f"probing the vector ISAs failed: {e}")
    # Anything printed to stdout, from Python or a native library, goes to the log.
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req_id = None
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise ValueError(f"a request is a JSON object, got {type(req).__name__}")
            req_id = req.get("id")
            op = req.get("op")
            if op == "ping":
                answer = {"id": req_id, "ok": True, "torch": torch.__version__, "pid": os.getpid(),
                          "inductor_cache": inductor_cache}
            elif op == "shutdown":
                out.write(json.dumps({"id": req_id, "ok": True}) + "\n")
                out.flush()
                return 0
            elif op == "compile":
                with tempfile.TemporaryDirectory(prefix="aoti_compile_") as workdir:
                    answer = compile_request(req, workdir)
                log(f"request {req_id}: {os.path.basename(str(req.get('program')))}: {answer.get('phase')} "
                    f"in {answer.get('seconds')} s (loading {answer.get('load_seconds')} s, "
                    f"aoti_compile_and_package {answer.get('compile_seconds')} s)")
            else:
                answer = {"id": req_id, "ok": False, "phase": "request",
                          "error": {"type": "BadRequest", "message": f"unknown op {op!r}; expected compile, ping or shutdown"}}
        except Exception as e:  # a bad request must not end the server
            answer = {"id": req_id, "ok": False, "phase": "request",
                      "error": {"type": type(e).__name__, "message": str(e), "traceback": traceback.format_exc()}}
        out.write(json.dumps(answer) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
