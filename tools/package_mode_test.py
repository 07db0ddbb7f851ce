"""The packager says what it does to the module's mode, and keeps it when asked.

A model with dropout and batch norm, returned by make_model() in training mode (as a
freshly built nn.Module is): packaged by default, its program is the eval-mode one (no
dropout, batch norm by its running statistics) and the log says model.eval() was called
and why; with --keep-mode the program keeps the training-mode ops and the log says so. A
model returned in eval mode is left alone. --export-only: no AOTI compile.
"""
import os
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
model_file = os.path.join(tmp, "dropout_model.py")
with open(model_file, "w") as f:
    f.write('''import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.bn = torch.nn.BatchNorm1d(8)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.bn(self.fc(x)))


def make_model(mode="train"):
    m = Net()
    return m.eval() if mode == "eval" else m


def example_inputs():
    return (torch.randn(4, 8),)
''')


def package(*extra):
    out = os.path.join(tmp, "m%d.pt2" % len(os.listdir(tmp)))
    r = subprocess.run([sys.executable, os.path.join(HERE, "package_model.py"), "--model", model_file, "--out", out,
                        "--export-only", *extra], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"package_model.py {' '.join(extra)} failed:\n{r.stderr[-2000:]}")
    ep = torch.export.load(out)
    # dropout(input, p, train) and batch_norm(..., training, momentum, eps, cudnn): the mode
    # is an argument of the exported op.
    modes = {}
    for n in ep.graph.nodes:
        if n.op == "call_function" and str(n.target) == "aten.dropout.default":
            modes["dropout"] = n.args[2]
        if n.op == "call_function" and str(n.target) == "aten.batch_norm.default":
            modes["batch_norm"] = n.args[5]
    return r.stderr, modes


failures = []
log, modes = package()
if "model.eval() called: make_model() returned the module in training mode (1 BatchNorm1d, 1 Dropout)" not in log:
    failures.append(f"the default does not say it called model.eval(): {log[-800:]}")
if "keep_mode = True" not in log:
    failures.append("the default does not name keep_mode")
if modes != {"dropout": False, "batch_norm": False}:
    failures.append(f"the default package is not in eval mode: {modes}")
log, modes = package("--keep-mode")
if "mode: training, kept as make_model() returned it" not in log:
    failures.append(f"--keep-mode does not say it kept training mode: {log[-800:]}")
if modes != {"dropout": True, "batch_norm": True}:
    failures.append(f"--keep-mode did not keep training mode: {modes}")
log, modes = package("--model-kwargs", '{"mode": "eval"}')
if "mode: eval, as make_model() returned it" not in log:
    failures.append(f"a model returned in eval mode is not said to be: {log[-800:]}")
for f in failures:
    print("FAIL:", f)
print("package_mode_test: %s" % ("FAILED" if failures else "3 passed"))
sys.exit(1 if failures else 0)
