"""The AOTI compile: the host's vector ISAs probed once, the compile, and the compiler's errors."""

import os
import re
import time
import traceback

from aoti_aten_fallbacks import AtenFallbacks, split_configs

from .common import log


def probe_isas_at_once(cpu_vec_isa):
    """Inductor probes the host's vector ISAs one after the other, a test compile and a
    load each (about 3 s apiece here). Each answer is cached on its ISA object, so probing
    the ISAs the CPU claims on threads of their own (the compiles are processes) leaves
    valid_vec_isa_list only the cached answers to read. Where this wheel's module lacks
    what is used here, nothing is done and inductor probes as usual."""
    import platform
    from concurrent.futures import ThreadPoolExecutor

    checker = getattr(cpu_vec_isa, "x86_isa_checker", None)
    candidates = getattr(cpu_vec_isa, "supported_vec_isa_list", None)
    if checker is None or candidates is None or platform.machine() not in ("x86_64", "AMD64"):
        return
    flags = checker()
    claimed = [isa for isa in candidates if all(flag in flags for flag in str(isa).split())]
    if len(claimed) > 1:
        with ThreadPoolExecutor(len(claimed)) as pool:
            list(pool.map(bool, claimed))


def probe_vector_isas(shared_dir=None):
    """The host's vector ISAs, probed once per machine rather than once per process.

    Inductor compiles a test program per ISA and loads it (about 7 s of g++ here) in its
    cache directory, which is each packaging action's own: every package paid for it. The
    test programs are built in `shared_dir` instead (by default beside the headers inductor
    precompiles, <tempdir>/torchinductor_<user>), where inductor names each by its code,
    flags and compiler and locks it while building; each is still loaded afresh by a child
    process, and the answers stay cached in this process for its compiles. The compile's
    own cache directory is restored before anything else is compiled. On any problem the
    probes run in the process's own cache, as inductor does. Returns the ISAs' names."""
    from torch._inductor import cpu_vec_isa

    own = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    try:
        if shared_dir is None:
            from torch._inductor.runtime.cache_dir_utils import default_cache_dir

            shared_dir = os.path.join(default_cache_dir(), "aoti_harness_vector_isas")
        os.makedirs(shared_dir, exist_ok=True)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = shared_dir
        probe_isas_at_once(cpu_vec_isa)
        isas = cpu_vec_isa.valid_vec_isa_list()
    except Exception as e:
        log(f"the vector ISAs are not probed in {shared_dir} ({type(e).__name__}: {e}); probed here instead")
        isas = None
    finally:
        if own is None:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = own
    if isas is None:
        probe_isas_at_once(cpu_vec_isa)
        isas = cpu_vec_isa.valid_vec_isa_list()
    return [str(i) for i in isas]


def compiler_errors(message, context=2, limit=40):
    """The compiler's `error:` lines with a little context, without the warning flood."""
    lines = message.splitlines()
    keep = set()
    for i, line in enumerate(lines):
        if re.search(r"\berror\b", line) and not line.startswith(("CppCompileError", "InductorError")):
            keep.update(range(i, min(len(lines), i + context + 1)))
    picked = [lines[i] for i in sorted(keep)][:limit]
    return "\n".join(picked)


class KernelInformation:
    """Inductor's provenance record of a compile (trace.provenance_tracking_level != 0): each
    generated kernel and extern call, by its name in the generated code -> one list per call
    of it, in the order inductor generated them (its ":<handle>" suffix), of the exported
    graph's nodes the call came from. A name called twice (an extern kernel such as
    aoti_torch_cpu_addmm_out, or one kernel's code shared) has two lists.

    AOTI writes the record into the package only once the package is built; after a compile
    error it is gone (inductor restores its provenance state when the compile ends). So it is
    read at the C++ compile itself, whether that succeeds or fails, by wrapping
    AotCodeCompiler.compile for the duration of one compile. A torch without that entry point
    or without provenance tracking gives no record: the reducer then reads kernels' names."""

    def __init__(self, configs):
        self.record = None
        self.wanted = str(configs.get("trace.provenance_tracking_level", 0)) not in ("0", "False", "None")

    def __enter__(self):
        if not self.wanted:
            return self
        from torch._inductor import codecache, debug

        self.cls = getattr(codecache, "AotCodeCompiler", None)
        self.original = getattr(self.cls, "compile", None) if self.cls else None
        if self.original is None or not hasattr(debug, "create_kernel_information_json"):
            return self

        def compile_and_record(*args, **kwargs):
            try:
                return self.original(*args, **kwargs)
            finally:
                # A record that cannot be read is no record; it never changes the compile's outcome.
                try:
                    self.record = self.calls(debug.create_kernel_information_json())
                except Exception as e:
                    log(f"inductor's provenance record is unreadable, ignored: {type(e).__name__}: {e}")

        self.cls.compile = staticmethod(compile_and_record)
        return self

    @staticmethod
    def calls(information):
        def handle(kernel):
            name, _, number = kernel.rpartition(":")
            return (name, int(number)) if name and number.isdigit() else (kernel, 0)

        record = {}
        for kernel in sorted(information, key=lambda k: handle(k)[1]):
            record.setdefault(handle(kernel)[0], []).append([str(n) for n in information[kernel].get("pre_grad_nodes", [])])
        return record

    def __exit__(self, *exc):
        if self.wanted and self.original is not None:
            self.cls.compile = self.original
        return False


def compile_aoti(ep, configs, pt2_path):
    """Returns the compile record; never raises for a compiler failure. With provenance
    tracking on, the record's "kernel_information" is KernelInformation's."""
    import torch

    start = time.time()
    inductor_configs, fallbacks, undecomposed = split_configs(configs)
    provenance = KernelInformation(configs)
    try:
        with provenance, AtenFallbacks(fallbacks, undecomposed):
            torch._inductor.aoti_compile_and_package(
                ep, package_path=pt2_path, inductor_configs=inductor_configs)
        record = {"status": "ok", "seconds": round(time.time() - start, 3)}
    except Exception as e:
        record = {
            "status": "error",
            "seconds": round(time.time() - start, 3),
            "error": {
                "type": f"{type(e).__module__}.{type(e).__qualname__}",
                "message": str(e),
                "compiler_errors": compiler_errors(str(e)),
                "traceback": "".join(traceback.format_tb(e.__traceback__)),
            },
        }
    if provenance.record is not None:
        record["kernel_information"] = provenance.record
    note_in_ledger(record)
    return record


def note_in_ledger(record):
    """One line per AOTI compile in the file $AOTI_COMPILE_LEDGER names, when it does: CI
    counts the compiles each of its phases made (packaging actions, the reducer's compile
    servers) from it (tools/ci_phases.sh). Appended in one write; never fails a compile."""
    path = os.environ.get("AOTI_COMPILE_LEDGER")
    if not path:
        return
    try:
        line = f"{time.time():.3f} {os.getpid()} {record['status']} {record['seconds']}\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    except OSError as e:
        log(f"the compile ledger {path} is not written ({e})")
