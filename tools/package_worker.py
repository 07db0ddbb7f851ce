#!/usr/bin/env python3
"""package_worker: the packager (package_model.py) as a Bazel persistent worker.

A packaging or export action spends 4 to 8 s of its 15 to 25 importing torch, torch.export
and inductor before it does anything of its own; //... runs about a hundred of them, the
model repositories as many again. As a worker (aoti_package, aoti_prebuilt_package:
execution_requirements supports-workers), one process imports those once, and each request
runs in a child forked from it: the child gets the request's arguments as its sys.argv,
runs the packager's command as `python package_model.py ARGS` would, and exits; whatever it
did (the model file it imported, the configs it patched, the seed it set) dies with it, so
requests cannot see each other. What the child prints (its log, the compiler's output)
becomes the response's output, which Bazel shows as the action's own.

A process's first AOTI compile costs 20 to 30 s more than its later ones (inductor's
pattern tables, its lowerings and decompositions, the compiler's probes are built on first
use, in memory); a child forked from a cold worker would pay that every time. So a worker started
with --warm-up (the AotiPackage actions' workers; exports compile nothing) compiles a
two-op model once, in a cache directory of its own that it removes when it
exits (and that a later worker removes where Bazel killed this one with SIGKILL), before
it takes a request: every child starts warm. What the warm-up leaves in
memory is keyed by content (a child that meets the same kernel gets the same code), and
nothing of it reaches a child's files: each request has its own TORCHINDUCTOR_CACHE_DIR,
as a fresh process would. A warm-up that fails is logged and skipped; requests then run
cold, as before.

Before torch is imported, the process drops the variables the packager never lets reach
torch (common.py's STRIPPED_TORCH_VARIABLES, read at import) and sets the packager's
default TORCHINDUCTOR_COMPILE_THREADS, as package_model.py does. A torch that changed on
disk since the import (a virtualenv reinstalled under a running Bazel server) is noticed:
that request runs in a fresh interpreter and the worker restarts itself after answering.

Without --persistent_worker (a strategy that does not use workers: remote execution,
--strategy=AotiPackage=sandboxed) it runs the one command of its @flagfile and exits with
its status. The protocol is Bazel's: varint-delimited WorkRequest and WorkResponse
protocol buffers on stdin and stdout (worker_protocol.proto), written here by hand for the
three fields each side uses, so that the worker needs nothing but the torch virtualenv.
"""

import importlib.util
import os
import runpy
import subprocess
import sys
import shutil
import signal
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))


def read_flagfile_args(argv):
    """The command's arguments. A command line that is one @FILE (Bazel's param file,
    "multiline": one argument a line) is that file's lines; any other is itself (an argument
    such as a label, "@repo//:target", is never read as a file)."""
    if len(argv) == 1 and argv[0].startswith("@") and "//" not in argv[0] and os.path.isfile(argv[0][1:]):
        with open(argv[0][1:], encoding="utf-8") as f:
            return f.read().splitlines()
    return list(argv)


# --- the protocol: Bazel's WorkRequest and WorkResponse, varint-delimited ---------------

def _read_varint(stream):
    """A varint from `stream`; None at the end of the stream before its first byte."""
    shift, value = 0, 0
    while True:
        b = stream.read(1)
        if not b:
            if shift == 0:
                return None
            raise EOFError("the worker's input ended inside a length prefix")
        value |= (b[0] & 0x7F) << shift
        if not b[0] & 0x80:
            return value
        shift += 7
        if shift > 63:
            raise ValueError("a varint longer than 10 bytes on the worker's input")


def _varint_at(buf, i):
    shift, value = 0, 0
    while True:
        if i >= len(buf):
            raise ValueError("a WorkRequest ends inside a varint")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise ValueError("a varint longer than 10 bytes in a WorkRequest")


def parse_work_request(buf):
    """(arguments, request_id) of a WorkRequest (arguments = 1, request_id = 3); the other
    fields (inputs' digests, cancel, verbosity, sandbox_dir) are skipped."""
    args, request_id, i = [], 0, 0
    while i < len(buf):
        key, i = _varint_at(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint_at(buf, i)
            if field == 3:
                request_id = value
        elif wire == 2:
            n, i = _varint_at(buf, i)
            if i + n > len(buf):
                raise ValueError("a WorkRequest field runs past the message's end")
            if field == 1:
                args.append(buf[i:i + n].decode("utf-8"))
            i += n
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise ValueError(f"a WorkRequest field of wire type {wire}, which proto3 does not write")
    return args, request_id


def _varint(value):
    if value < 0:
        value += 1 << 64  # int32's negative values: ten bytes, as protobuf writes them
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def encode_work_response(exit_code, output, request_id):
    """A WorkResponse (exit_code = 1, output = 2, request_id = 3), its length before it."""
    body = bytearray()
    if exit_code:
        body += b"\x08" + _varint(exit_code)
    data = output.encode("utf-8", errors="replace")
    if data:
        body += b"\x12" + _varint(len(data)) + data
    if request_id:
        body += b"\x18" + _varint(request_id)
    return _varint(len(body)) + bytes(body)


# --- one request ---------------------------------------------------------------------

def run_in_child(args):
    """Runs `python ARGS` (ARGS[0] the packager's command) in a child forked from this
    process. Returns (exit code, what it printed)."""
    with tempfile.TemporaryFile() as out:
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 1
            try:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.dup2(out.fileno(), 1)
                os.dup2(out.fileno(), 2)
                sys.argv = list(args)
                sys.path[0] = os.path.dirname(os.path.abspath(args[0]))
                try:
                    runpy.run_path(args[0], run_name="__main__")
                    code = 0
                except SystemExit as e:
                    if e.code is None or isinstance(e.code, int):
                        code = e.code or 0
                    else:
                        print(e.code, file=sys.stderr)
                        code = 1
                except BaseException:  # what python would print for an uncaught error
                    traceback.print_exc()
                    code = 1
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        output = out.read().decode("utf-8", errors="replace")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return 128 + sig, output + f"\n[package_worker] the packager was killed by signal {sig}\n"
    return os.WEXITSTATUS(status), output


def run_fresh(args):
    """Runs `python ARGS` in a fresh interpreter (the worker's own imports are stale)."""
    proc = subprocess.run([sys.executable] + list(args), stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return proc.returncode, proc.stdout.decode("utf-8", errors="replace")


# --- the worker ----------------------------------------------------------------------

def prepare_environment():
    """What package_model.py does to its environment before it imports torch."""
    spec = importlib.util.spec_from_file_location("_package_worker_common",
                                                  os.path.join(HERE, "aoti_package", "common.py"))
    common = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(common)
    for name in list(os.environ):
        if common.is_stripped_torch_variable(name):
            del os.environ[name]
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")


def import_torch():
    """torch and what every packaging action reaches of it; returns the files whose change
    on disk makes these imports stale."""
    import torch
    import torch.export  # noqa: F401
    import torch._export.serde.serialize  # noqa: F401
    import torch._inductor.codecache  # noqa: F401
    import torch._inductor.compile_fx  # noqa: F401
    import torch._inductor.cpp_builder  # noqa: F401
    import torch._inductor.codegen.cpp  # noqa: F401
    import torch._inductor.codegen.cpp_wrapper_cpu  # noqa: F401
    import torch._inductor.package  # noqa: F401
    return [torch.__file__, os.path.join(os.path.dirname(torch.__file__), "version.py")]


def warm_up(cache_dir):
    """One AOTI compile of a two-op model, its inductor cache in `cache_dir`, so that what
    inductor builds on first use is built here, once, before the children fork. Returns
    the seconds it took, or None where it failed (logged; children then start cold)."""
    import torch

    class WarmUp(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) + x.sum(-1, keepdim=True)

    own = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    start = time.monotonic()
    try:
        program = torch.export.export(WarmUp(), (torch.ones(2, 4),))
        torch._inductor.aoti_compile_and_package(program, package_path=os.path.join(cache_dir, "warm_up.pt2"))
        return time.monotonic() - start
    except Exception:
        print("[package_worker] the warm-up compile failed; requests run cold:\n" + traceback.format_exc(),
              file=sys.stderr, flush=True)
        return None
    finally:
        if own is None:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = own


def _stamp(paths):
    out = []
    for p in paths:
        try:
            st = os.stat(p)
            out.append((p, st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            out.append((p, None, None, None))
    return out


WARM_PREFIX = "aoti_package_worker_"


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_warm_dirs(parent):
    """Removes the warm-up directories (WARM_PREFIX<pid>_...) in `parent` whose worker is
    gone: Bazel ends a worker with SIGKILL at times (a server shut down, a worker it
    destroys), which no handler sees. A directory of a live process, or one whose name
    carries no process id (made by an older worker: its owner cannot be told), is left.
    Returns the directories removed."""
    removed = []
    try:
        names = os.listdir(parent)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(WARM_PREFIX):
            continue
        pid = name[len(WARM_PREFIX):].split("_", 1)[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        path = os.path.join(parent, name)
        try:
            if os.stat(path).st_uid != os.getuid():
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def serve(warm):
    # The protocol owns stdout: whatever an import prints goes to the worker's log.
    proto_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    proto_in = os.fdopen(os.dup(0), "rb")
    prepare_environment()
    watched = import_torch()
    stamp = _stamp(watched)
    owner = os.getpid()
    remove_stale_warm_dirs(tempfile.gettempdir())
    warm_dir = tempfile.mkdtemp(prefix=f"{WARM_PREFIX}{owner}_")

    def remove_warm_dir():
        if os.getpid() == owner:
            shutil.rmtree(warm_dir, ignore_errors=True)

    # Bazel stops a worker with SIGTERM: the warm-up's directory goes with it.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        seconds = warm_up(warm_dir) if warm else None
        if seconds is not None:
            print(f"[package_worker] warm: one AOTI compile took {seconds:.1f} s", file=sys.stderr, flush=True)
        return _serve_requests(proto_in, proto_out, watched, stamp, remove_warm_dir)
    finally:
        remove_warm_dir()


def _serve_requests(proto_in, proto_out, watched, stamp, before_restart):
    while True:
        n = _read_varint(proto_in)
        if n is None:
            return 0
        buf = proto_in.read(n)
        if len(buf) != n:
            raise EOFError("the worker's input ended inside a WorkRequest")
        request_id = 0
        try:
            args, request_id = parse_work_request(buf)
            args = read_flagfile_args(args)
            stale = _stamp(watched) != stamp
            if not args:
                code, output = 2, "[package_worker] a request without arguments (expected the packager's command and its flags)\n"
            elif stale:
                code, output = run_fresh(args)
            else:
                code, output = run_in_child(args)
        except Exception:
            stale = False
            code, output = 1, "[package_worker] the worker could not run this request:\n" + traceback.format_exc()
        proto_out.write(encode_work_response(code, output, request_id))
        proto_out.flush()
        if stale:  # start again with the torch now on disk
            before_restart()
            os.execv(sys.executable, [sys.executable] + sys.argv)


def main(argv):
    warm = "--warm-up" in argv
    argv = [a for a in argv if a != "--warm-up"]
    if "--persistent_worker" in argv:
        return serve(warm)
    args = read_flagfile_args(argv)
    if not args:
        print("usage: package_worker.py [--warm-up] --persistent_worker | package_worker.py @FLAGFILE "
              "(the packager's command, package_model.py, and its flags)", file=sys.stderr)
        return 2
    os.execv(sys.executable, [sys.executable] + args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
