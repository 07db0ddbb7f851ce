"""The AOTI compile: the host's vector ISAs probed once, the compile, and the compiler's errors."""

import json
import os
import re
import time
import traceback

from aoti_aten_fallbacks import AtenFallbacks, PlantedBug, split_configs

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

    Inductor compiles a test program per ISA and loads it (about 6 s here, in every process
    that compiles). The answer (which of the ISAs the CPU claims the compiler builds and the
    CPU runs) is kept in `shared_dir` (by default beside the headers inductor precompiles,
    <tempdir>/torchinductor_<user>), named by what decides it: the torch version, the
    compiler's identity, the CPU's flags and inductor's list of ISAs. A later process reads
    it and tells inductor (its valid_vec_isa_list) without a probe. Where no answer is kept
    yet, the probes run once, in `shared_dir` (inductor locks each and names it by code,
    flags and compiler), and the answer is written for the next process. A directory this
    user does not own alone, or an answer that does not read, is ignored: the probes then
    run here, as inductor does. Returns the ISAs' names."""
    from torch._inductor import cpu_vec_isa

    own = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    isas = None
    try:
        if shared_dir is None:
            from torch._inductor.runtime.cache_dir_utils import default_cache_dir

            shared_dir = os.path.join(default_cache_dir(), "aoti_harness_vector_isas")
        os.makedirs(shared_dir, mode=0o700, exist_ok=True)
        answer_path = isa_answer_path(cpu_vec_isa, shared_dir)
        isas = read_isa_answer(cpu_vec_isa, answer_path)
        if isas is None:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = shared_dir
            probe_isas_at_once(cpu_vec_isa)
            isas = cpu_vec_isa.valid_vec_isa_list()
            if answer_path:
                write_isa_answer(answer_path, isas)
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


def isa_answer_path(cpu_vec_isa, shared_dir):
    """Where the answer for this torch, compiler and CPU lives; None where it cannot be
    named (a torch without these entry points, a directory others may write)."""
    import hashlib
    import platform
    import subprocess

    import torch
    from torch._inductor import config

    st = os.stat(shared_dir)
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        log(f"{shared_dir} is not this user's own directory; the vector ISAs are probed, not read from it")
        return None
    checker = getattr(cpu_vec_isa, "x86_isa_checker", None)
    candidates = getattr(cpu_vec_isa, "supported_vec_isa_list", None)
    if checker is None or candidates is None or platform.machine() not in ("x86_64", "AMD64"):
        return None
    compiler = os.environ.get("CXX") or getattr(config.cpp, "cxx", (None, "g++"))[-1] or "g++"
    version = subprocess.run([compiler, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, timeout=30).stdout
    key = json.dumps({"torch": torch.__version__, "compiler": compiler, "compiler_version": version,
                      "flags": sorted(checker()), "candidates": [type(i).__name__ for i in candidates],
                      "vec_isa_ok": config.cpp.vec_isa_ok, "aten_cpu_capability": os.environ.get("ATEN_CPU_CAPABILITY")},
                     sort_keys=True)
    return os.path.join(shared_dir, "answer-" + hashlib.sha256(key.encode()).hexdigest()[:32] + ".json")


def read_isa_answer(cpu_vec_isa, path):
    """The kept answer, handed to inductor; None when there is none or it does not read."""
    import functools

    if not path or not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            names = json.load(f)["valid"]
        by_name = {type(i).__name__: i for i in cpu_vec_isa.supported_vec_isa_list}
        isas = [by_name[n] for n in names]
    except (OSError, ValueError, KeyError, TypeError) as e:
        log(f"the kept vector ISA answer {path} does not read ({type(e).__name__}: {e}); probing")
        return None
    # Inductor asks an ISA object whether it builds (bool(isa): a test compile and a load)
    # when it generates a kernel too, not only in valid_vec_isa_list: each object answers
    # from the kept answer instead.
    for isa in by_name.values():
        object.__setattr__(isa, "check_build", (lambda code, ok=type(isa).__name__ in names: ok))
    cpu_vec_isa.valid_vec_isa_list = functools.cache(lambda: list(isas))
    return isas


def write_isa_answer(path, isas):
    """The answer, written whole (a temporary file renamed) for the next process."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump({"valid": [type(i).__name__ for i in isas], "names": [str(i) for i in isas]}, f)
    os.replace(tmp, path)


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
        with provenance, AtenFallbacks(fallbacks, undecomposed), PlantedBug.from_configs(configs):
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
