#!/usr/bin/env python3
# aoti_harness repro (the template: reducer/artifacts.cc writes the header and the case).
#
# Usage: python repro.py    (exit 1: the failure reproduces; 0: it does not; 2: it fails differently;
#                           3: it cannot run here: this torch cannot load repro.pt2, no CUDA
#                           device for a CUDA repro, or its program's pytree types come from a
#                           module the test did not declare)
import copy
import json
import math
import os
import subprocess
import sys
import tempfile
import warnings

warnings.filterwarnings("ignore")
import torch
from torch.utils import _pytree as pytree

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "repro.pt2")

# --- the case: written per repro by aoti_harness (reducer/artifacts.cc) ---
FAILURE_CLASS = "accuracy"
CHECK_STR = ""
INDUCTOR_CONFIGS = json.loads("{}")
# The model inside repro.pt2.
MODEL = "model"
# The check options the failing test ran with (its case.json's check_options): the repro
# judges by the same rule, tolerances and outputs, and runs the compiled model as it did.
OPTIONS = {"accuracy": {"mode": "fp64", "tolerance": 1e-3}, "runner": {"op_libraries": [], "env": []}}
# The device the program, its weights and its inputs are on (the compiled model's).
DEVICE = "cpu"
# The accuracy modes as the check options spell them, and the harness's bound of a
# reliable float64 reference (harness/check/accuracy_rule.h).
FP64, STRICT, ASSERT_CLOSE, SQNR = "fp64", "strict", "assert_close", "sqnr"
UNRELIABLE_REFERENCE = 0.1
# --- end of the case ---

ACCURACY = OPTIONS["accuracy"]
RUNNER = OPTIONS["runner"]
SEED = RUNNER.get("seed")  # the check seeded eager and the compiled run alike; None: unseeded
OP_LIBRARIES = [lib if os.path.isabs(lib) else os.path.join(HERE, lib) for lib in RUNNER["op_libraries"]]


def load_libraries():
    # The quantize/dequantize operators of a PT2E int8 program: torch defines them in Python,
    # in a module import torch does not load.
    import torch.ao.quantization.fx._decomposed  # noqa: F401
    for lib in OP_LIBRARIES:
        torch.ops.load_library(lib)


def load_program():
    """The exported program MODEL of repro.pt2, with its sample inputs. A library's pytree
    types (transformers' output dicts) are registered by importing their module first, only
    a module the test declared (its --aoti_pytree_modules, in OPTIONS) or $AOTI_PYTREE_MODULES
    names: never one that only the file names."""
    import importlib
    import re
    from torch.export.pt2_archive import _package

    allowed = set(RUNNER.get("pytree_modules", [])) | {
        m.strip() for m in os.environ.get("AOTI_PYTREE_MODULES", "").split(",") if m.strip()}
    while True:
        try:
            try:
                with _package.PT2ArchiveReader(PROGRAM) as reader:
                    return _package._load_exported_programs(reader, reader.get_file_names(), None)[MODEL]
            except (AttributeError, TypeError):  # another torch: its public loader
                return _package.load_pt2(PROGRAM).exported_programs[MODEL]
        except NotImplementedError as e:
            found = re.search(r"Deserializing (([A-Za-z_][\w.]*)\.\w+) in pytree (?:is not|failed)", str(e))
            if not found or found.group(2) in sys.modules:
                raise
            if found.group(2) not in allowed:
                print(f"repro.py: repro.pt2's program uses the pytree type {found.group(1)}, registered when "
                      f"{found.group(2)} is imported; repro.py imports only the modules the test declared "
                      f"(--aoti_pytree_modules), and {found.group(2)} is not one, so it cannot run here. If you "
                      f"trust that module, run AOTI_PYTREE_MODULES={found.group(2)} python repro.py")
                raise SystemExit(3)
            importlib.import_module(found.group(2))


# The child's exit status when the compiled package does not load: the harness's "load
# error", apart from an error of the run ("runtime error").
LOAD_ERROR_EXIT = 17


def child(package, inputs_path, outputs_path):
    """Runs the compiled model; a crash here only ends this child process."""
    load_libraries()
    args, kwargs = torch.load(inputs_path)
    try:
        model = torch._inductor.aoti_load_package(package)
    except Exception as e:
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(LOAD_ERROR_EXIT)
    if SEED is not None:
        torch.manual_seed(SEED)
    out = model(*args, **kwargs)
    torch.save(out, outputs_path)


def observed(reason, message=""):
    same = reason == FAILURE_CLASS and (not CHECK_STR or CHECK_STR in message)
    print(f"repro.py: {reason}{': ' + message[-2000:] if message else ''}")
    print("repro.py: the failure REPRODUCES" if same else f"repro.py: expected {FAILURE_CLASS}; it does not reproduce")
    return 1 if same else (0 if reason == "passes" else 2)


def assert_close_tolerances(t, accuracy):
    """The test's rtol and atol for a floating output, the dtype's defaults where it gave none
    (torch.testing.assert_close's own); integers and bool are compared exactly."""
    from torch.testing._comparison import default_tolerances
    default_rtol, default_atol = default_tolerances(t)
    if not (t.is_floating_point() or t.is_complex()):
        return default_rtol, default_atol
    rtol, atol = accuracy.get("rtol"), accuracy.get("atol")
    rtol = default_rtol if rtol is None or rtol < 0 else rtol
    atol = default_atol if atol is None or atol < 0 else atol
    return rtol, atol


def allclose_at(eager, compiled, rtol, atol):
    """allclose(eager, compiled) as upstream's same() makes it: in the outputs' dtype, NaNs
    equal, bool as uint8; rtol scales |compiled|."""
    if eager.dtype == torch.bool:
        eager, compiled = eager.to(torch.uint8), compiled.to(torch.uint8)
    return torch.allclose(eager, compiled, rtol=rtol, atol=atol, equal_nan=True)


def judge(eager, compiled, fp64, accuracy):
    """The test's rule on one output, as the harness judges it (harness/check/accuracy_rule.cc;
    //reducer:repro_rule_differential_test holds the two to the same verdict on every case):
    ("passes" | "accuracy" | "unreliable reference", why)."""
    compiled = compiled.to(eager.device)
    if eager.dtype != compiled.dtype or eager.shape != compiled.shape:
        return "accuracy", f"compiled {compiled.dtype}{list(compiled.shape)}, eager {eager.dtype}{list(eager.shape)}"
    floating, complex_ = eager.is_floating_point(), eager.is_complex()
    non_fp = not floating and not complex_
    mode, tol = accuracy["mode"], accuracy["tolerance"]
    if non_fp and accuracy.get("ignore_non_fp"):
        return "passes", "non-floating output ignored"
    if non_fp and accuracy.get("exact_non_fp"):
        return ("passes", "") if torch.equal(eager, compiled) else ("accuracy", "differs (compared exactly)")
    if mode == SQNR and floating:
        # A quantized program's rule: SQNR of compiled against eager, in dB, in float64.
        least = accuracy.get("min_sqnr_db", 30.0)
        db = sqnr(compiled, eager)
        return ("passes", "") if db >= least else ("accuracy", f"SQNR {db:.4g} dB < {least:.4g} dB against eager")
    if mode == STRICT:
        return ("passes", "") if allclose_at(eager, compiled, tol, tol) else ("accuracy", f"not allclose at {tol}")
    if mode == ASSERT_CLOSE:
        # torch.testing.assert_close(actual=compiled, expected=eager): rtol scales |eager|.
        rtol, atol = assert_close_tolerances(eager, accuracy)
        try:
            torch.testing.assert_close(compiled, eager, rtol=rtol, atol=atol, equal_nan=True)
            return "passes", ""
        except AssertionError as e:
            return "accuracy", str(e)
    from torch._dynamo.utils import same
    if (fp64 is not None and fp64.is_floating_point() and fp64.dtype != torch.float64
            and fp64.dtype == compiled.dtype):
        # The float64 run's output, cast by the program itself (a positional .float() after a
        # bfloat16 autocast region): the reference still, rounded to the output's dtype.
        fp64 = fp64.to(torch.float64)
    if not same(eager, compiled, fp64, tol=tol, equal_nan=True, ignore_non_fp=bool(accuracy.get("ignore_non_fp")),
                log_error=lambda *a, **k: None):
        return "accuracy", f"differs under the fp64 rule (tol {tol})"
    relative = unreliable_reference(eager, compiled, fp64, tol)
    if relative is not None:
        return "unreliable reference", (
            f"eager is {relative:.0%} from float64 (relative RMSE): the float64 RMSE bound would let any compiled "
            "output of that scale pass")
    return "passes", ""


def sqnr(got, ref):
    """10 log10(sum ref^2 / sum (got - ref)^2) in float64: inf when equal, nan when NaNs differ."""
    got, ref = got.to(torch.float64), ref.to(torch.float64)
    if got.numel() == 0:
        return math.inf
    if not torch.equal(got.isnan(), ref.isnan()):
        return math.nan
    both = ref.isnan()
    got, ref = torch.where(both, 0.0, got), torch.where(both, 0.0, ref)
    noise, signal = (got - ref).pow(2).sum().item(), ref.pow(2).sum().item()
    if noise == 0:
        return math.inf
    if math.isnan(noise):
        return math.nan
    if signal == 0 or math.isinf(noise):
        return -math.inf if not math.isinf(signal) else math.nan
    return 10.0 * math.log10(signal / noise)


def unreliable_reference(eager, compiled, fp64, tol):
    """Eager's relative RMSE against float64 when the output passed by the float64 RMSE bound
    (not by allclose) while eager itself is more than UNRELIABLE_REFERENCE from float64; else None."""
    if fp64 is None or not eager.is_floating_point() or fp64.dtype != torch.float64 or allclose_at(eager, compiled, tol, tol):
        return None
    if (not fp64.isnan().any() and not compiled.isnan().any() and eager.isnan().any()
            and torch.allclose(fp64.to(compiled.dtype), compiled, rtol=4e-2, atol=4e-2, equal_nan=True)):
        return None  # passed by the NaN rule, not the bound
    rms = fp64.pow(2).mean().sqrt().item()
    if not rms > 0:
        return None
    relative = (fp64 - eager.to(torch.float64)).pow(2).mean().sqrt().item() / rms
    return relative if relative > UNRELIABLE_REFERENCE else None


def random_operators(ep):
    """The program's operators that draw random numbers (ATen's nondeterministic_seeded tag),
    subgraphs included."""
    found = []

    def walk(graph_module):
        for node in graph_module.graph.nodes:
            tags = getattr(node.target, "tags", ())
            if torch.Tag.nondeterministic_seeded in tags:
                found.append(node.name)
        for child in graph_module.children():
            if isinstance(child, torch.fx.GraphModule):
                walk(child)

    walk(ep.graph_module)
    return found


def compile_package(ep, package):
    """aoti_compile_and_package under the test's inductor_configs, as the harness compiled it:
    values typed as the harness types them, and its own keys (aoti_harness.aten_fallbacks,
    aoti_harness.skip_decompositions, a test's planted bug) applied by aoti_aten_fallbacks.py
    beside this file, the harness's one implementation of them, never passed to inductor."""
    sys.path.insert(0, HERE)
    from aoti_aten_fallbacks import AtenFallbacks, PlantedBug, parse_config_value, split_configs

    typed = {k: parse_config_value(v) for k, v in INDUCTOR_CONFIGS.items()}
    configs, fallbacks, undecomposed = split_configs(typed)
    with AtenFallbacks(fallbacks, undecomposed), PlantedBug.from_configs(typed):
        torch._inductor.aoti_compile_and_package(ep, package_path=package, inductor_configs=configs)


def main():
    if DEVICE == "cuda" and not torch.cuda.is_available():
        print(f"repro.py: the repro runs on cuda, and this torch ({torch.__version__}) sees no CUDA device; "
              "it cannot run here: run it on a GPU host with a CUDA torch")
        return 3
    # The compiled package, the inputs and the outputs live as long as this run, and so do
    # inductor's files, kept there from the first import that makes them (reading repro.pt2).
    with tempfile.TemporaryDirectory(prefix="aoti_repro_") as work:
        keep_inductor_files(work)
        load_libraries()
        ep = load_program()
        return compile_and_judge(ep, work)


def keep_inductor_files(work):
    """Inductor's files go where TORCHINDUCTOR_CACHE_DIR says, and when it is not set, into this
    run's own directory, which is removed at its end. The headers inductor precompiles go with
    them: torch keeps those under the temporary directory whatever that variable says. The
    run's other temporary files (the compiled child's extracted package) stay in `work` too.
    A machine is left as it was, and a user who wants inductor's cache kept across runs sets
    TORCHINDUCTOR_CACHE_DIR."""
    tmp = os.path.join(work, "tmp")
    os.makedirs(tmp, exist_ok=True)
    tempfile.tempdir = tmp
    os.environ["TMPDIR"] = tmp
    cache = os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(work, "inductor_cache"))
    from torch._inductor import codecache
    if hasattr(codecache, "_HEADER_DIR"):  # torch 2.6 and later; another torch keeps its default
        codecache._HEADER_DIR = os.path.join(cache, "precompiled_headers")
        codecache._HEADER_LOCK_DIR = os.path.join(codecache._HEADER_DIR, "locks")


def compile_and_judge(ep, work):
    args, kwargs = ep.example_inputs
    package = os.path.join(work, "repro_compiled.pt2")
    try:
        compile_package(ep, package)
    except Exception as e:
        return observed("compile error", f"{type(e).__name__}: {e}")
    inputs_path, outputs_path = os.path.join(work, "inputs.pt"), os.path.join(work, "outputs.pt")
    torch.save((args, kwargs), inputs_path)
    # A flaky failure votes, as its test did: it reproduces when any of VOTES runs fails.
    votes = max(1, int(OPTIONS.get("votes", 1)))
    for run in range(votes):
        if votes > 1:
            print(f"repro.py: run {run + 1} of {votes} (the failure is flaky: any failing run reproduces it)")
        reason, message = run_once(ep, args, kwargs, package, inputs_path, outputs_path)
        if reason != "passes" or run == votes - 1:
            return observed(reason, message)


def run_once(ep, args, kwargs, package, inputs_path, outputs_path):
    """One run of the compiled repro in a child, judged: (what it did, the message)."""
    env = dict(os.environ)
    env.update(kv.split("=", 1) for kv in RUNNER.get("env", []))
    # torch's loader extracts the package under the temporary directory, and a child that
    # crashes cannot remove it: the child's temporary directory is inside this run's.
    child_tmp = os.path.join(os.path.dirname(os.path.abspath(package)), "child_tmp")
    os.makedirs(child_tmp, exist_ok=True)
    env["TMPDIR"] = child_tmp
    if RUNNER.get("runtime_check_inputs"):
        env["AOTI_RUNTIME_CHECK_INPUTS"] = "1"
    try:
        proc = subprocess.run([sys.executable, __file__, "--child", package, inputs_path, outputs_path],
                              capture_output=True, text=True, env=env, timeout=RUNNER.get("timeout_s"))
    except subprocess.TimeoutExpired:
        return "timeout", f"the compiled model ran past {RUNNER.get('timeout_s')} s"
    if proc.returncode < 0:
        import signal
        return f"signal {signal.Signals(-proc.returncode).name}", proc.stderr
    if proc.returncode == LOAD_ERROR_EXIT:
        return "load error", proc.stderr
    if proc.returncode != 0:
        return "runtime error", proc.stderr
    compiled = torch.load(outputs_path)
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    # Eager and float64 each from the program's own state, as the compiled child starts from
    # it: a program that writes its buffers in forward (a step counter, a cache) would
    # otherwise see the other run's writes (ep.module() shares the program's buffers).
    # Seeded as the check seeded them. A seeded program that draws random numbers has no
    # float64 reference (a float64 run draws other numbers even seeded alike): it is judged
    # against eager, as the check judges it.
    with torch.no_grad():
        if SEED is not None:
            torch.manual_seed(SEED)
        eager = copy.deepcopy(ep).module()(*args, **kwargs)
        fp64 = None
        if ACCURACY["mode"] == FP64 and not (SEED is not None and random_operators(ep)):
            to64 = lambda t: t.to(torch.float64) if isinstance(t, torch.Tensor) and t.is_floating_point() else t
            if SEED is not None:
                torch.manual_seed(SEED)
            fp64 = copy.deepcopy(ep).module().to(torch.float64)(*pytree.tree_map(to64, args),
                                                                **pytree.tree_map(to64, kwargs))
    eager, compiled = pytree.tree_leaves(eager), pytree.tree_leaves(compiled)
    fp64 = pytree.tree_leaves(fp64) if fp64 is not None else [None] * len(eager)
    if len(eager) != len(compiled):
        return "accuracy", f"the compiled model returned {len(compiled)} outputs, eager {len(eager)}"
    judged = OPTIONS.get("judged_outputs") or len(eager)
    unreliable = []
    for i in range(min(judged, len(eager))):
        if not isinstance(eager[i], torch.Tensor):
            continue
        verdict, why = judge(eager[i], compiled[i], fp64[i], ACCURACY)
        if verdict == "accuracy":
            return "accuracy", f"under {ACCURACY['mode']} accuracy: output {i}: {why}"
        if verdict != "passes":
            unreliable.append(f"output {i}: {why}")
    if unreliable:
        return "unreliable reference", "the float64 reference cannot judge " + "; ".join(unreliable)
    return "passes", ""

if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(*sys.argv[2:])
        sys.exit(0)
    print(f"repro.py: torch {torch.__version__}")
    try:
        code = main()
    except Exception as e:  # not a verdict: this torch could not load or judge the program
        print(f"repro.py: torch {torch.__version__} cannot run this repro: {type(e).__name__}: {str(e)[-2000:]}")
        code = 3
    sys.exit(code)
