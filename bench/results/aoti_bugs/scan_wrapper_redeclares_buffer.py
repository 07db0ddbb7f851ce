# Standalone AOTI repro, written by aoti_harness: compile error, 4 node(s), torch 2.13.0+cpu.
# Needs only torch: python repro_standalone.py  (exit 1: the failure reproduces; 0: it passes;
# 2: it fails otherwise; 3: it cannot run here).
# Drawn from a seed (their values do not matter to the failure): input zeros_like, input batch_norm, input scan_scan_combine_graph_0_mul_2, input scan_scan_combine_graph_0_sub.
import atexit, math, os, shutil, signal, subprocess, sys, tempfile
import torch
from torch import device
from torch.export import Dim
from torch.utils._pytree import tree_leaves as leaves
from torch._dynamo.utils import same
inf, nan, NoneType = float("inf"), float("nan"), type(None)

FAILURE, CHECK = 'compile error', ''
CONFIGS = {}
DEVICE, SEED, ENV, TIMEOUT = 'cpu', None, {}, 225.0
TOL, IGNORE_NON_FP = 0.001, False  # the test's rule: same() against a float64 run
JUDGED = None  # the outputs judged (None: all)


def drawn(seed, shape, dtype, mean=0.0, std=1.0, low=0, high=1):  # values that do not matter, from a seed
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) < mean
    if not dtype.is_floating_point:
        return torch.randint(low, high + 1, shape, generator=g, dtype=dtype)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * std + mean).to(dtype)


class Sub_scan_combine_graph_0(torch.nn.Module):
    def forward(self, arg0_1, arg1_1, mul_2, sub):
        add_1 = torch.ops.aten.add.Tensor(mul_2, sub);  mul_2 = sub = None
        mul_3 = torch.ops.aten.mul.Tensor(add_1, 1.0)
        return (add_1, mul_3)


class Repro(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scan_combine_graph_0 = Sub_scan_combine_graph_0()

    def forward(self, zeros_like, batch_norm, scan_scan_combine_graph_0_mul_2, scan_scan_combine_graph_0_sub):
        return self.graph(zeros_like, batch_norm, scan_scan_combine_graph_0_mul_2, scan_scan_combine_graph_0_sub)

    def graph(self, zeros_like, batch_norm, scan_scan_combine_graph_0_mul_2, scan_scan_combine_graph_0_sub):
        scan_combine_graph_0 = self.scan_combine_graph_0
        scan = torch.ops.higher_order.scan(scan_combine_graph_0, [zeros_like], [batch_norm], [scan_scan_combine_graph_0_mul_2, scan_scan_combine_graph_0_sub]);  scan_combine_graph_0 = zeros_like = batch_norm = scan_scan_combine_graph_0_mul_2 = scan_scan_combine_graph_0_sub = None
        getitem = scan[0];  getitem = None
        getitem_1 = scan[1];  scan = None
        relu = torch.ops.aten.relu.default(getitem_1);  getitem_1 = None
        return (relu,)


INPUTS = [drawn(1, [4, 8, 8], torch.float32, 0.0, 0.0), drawn(2, [2, 4, 8, 8], torch.float32, -0.0107, 0.545), drawn(3, [4, 8, 8], torch.float32, 0.0, 0.0), drawn(4, [4, 8, 8], torch.float32, 0.602, 0.203)]
DYNAMIC_SHAPES = None


def child(package, inputs, outputs):  # the compiled run, in a child: a crash ends it, not the check
    try:
        compiled = torch._inductor.aoti_load_package(package)
    except Exception as e:
        sys.exit(print(f"{type(e).__name__}: {e}", file=sys.stderr) or 17)  # 17: a load error
    if SEED is not None:
        torch.manual_seed(SEED)
    torch.save(compiled(*torch.load(inputs)), outputs)


def judged(e, c, model64):
    fp64 = model64(*[x.to(DEVICE).double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in INPUTS])
    return same(e, c, fp64, tol=TOL, equal_nan=True, ignore_non_fp=IGNORE_NON_FP)


def check():
    inputs = [x.to(DEVICE) if isinstance(x, torch.Tensor) else x for x in INPUTS]
    work = tempfile.mkdtemp(prefix="aoti_standalone_")
    atexit.register(shutil.rmtree, work, True)
    package, saved_in, saved_out = (os.path.join(work, f) for f in ("model.pt2", "in.pt", "out.pt"))
    try:
        program = torch.export.export(Repro().to(DEVICE), tuple(inputs), dynamic_shapes=DYNAMIC_SHAPES)
        torch._inductor.aoti_compile_and_package(program, package_path=package, inductor_configs=CONFIGS)
    except Exception as e:
        return "compile error", f"{type(e).__name__}: {e}"
    torch.save(inputs, saved_in)
    try:
        proc = subprocess.run([sys.executable, __file__, "--child", package, saved_in, saved_out],
                              capture_output=True, text=True, timeout=TIMEOUT, env={**os.environ, **ENV})
    except subprocess.TimeoutExpired:
        return "timeout", f"the compiled model ran past {TIMEOUT} s"
    if proc.returncode:
        kind = "load error" if proc.returncode == 17 else "runtime error"
        return (kind if proc.returncode > 0 else f"signal {signal.Signals(-proc.returncode).name}"), proc.stderr
    with torch.no_grad():
        if SEED is not None:
            torch.manual_seed(SEED)
        e, c = leaves(Repro().to(DEVICE)(*inputs))[:JUDGED], leaves(torch.load(saved_out))[:JUDGED]
        if len(e) != len(c):
            return "accuracy", f"the compiled model returned {len(c)} outputs, eager {len(e)}"
        if judged(e, c, lambda *a: leaves(Repro().to(DEVICE).double()(*a))[:JUDGED]):
            return "passes", ""
    return "accuracy", "the compiled model's outputs differ from eager's under the test's rule"


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        sys.exit(child(*sys.argv[2:]))
    reason, message = check()
    hit = reason == FAILURE and CHECK in message
    print(f"repro_standalone.py: {reason}{': ' + message[-2000:] if message else ''}")
    print("repro_standalone.py: the failure REPRODUCES" if hit else f"repro_standalone.py: expected {FAILURE}; it does not reproduce")
    sys.exit(1 if hit else 0 if reason == "passes" else 2)
