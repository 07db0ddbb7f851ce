"""A model file's own inputs per shape point (shape_inputs()) travel in the package.

Packaged with --export-only (no AOTI compile): the manifest names each point and its
inputs' records, and the archive holds their bytes, which read back as the inputs the file
gave. A file that breaks the contract fails the build with a message naming the file, the
point and what to change: shape_inputs() on a static program, a point name that cannot name
a test, inputs outside dynamic_shapes()'s range, the wrong count of inputs.
"""
import os
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import package_model as pm  # noqa: E402

tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
failures = []


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


HEAD = '''import torch
from torch.export import Dim


class Bag(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(50, 4, mode="sum")

    def forward(self, ids, offsets):
        return self.bag(ids, offsets)


def make_model():
    return Bag()


def example_inputs():
    return (torch.tensor([1, 2, 3, 4, 5]), torch.tensor([0, 2]))

'''
DYNAMIC = '''
def dynamic_shapes():
    return ({0: Dim("ids", min=2, max=64)}, {0: Dim("bags", min=1, max=16)})
'''


def package(body, name):
    path = os.path.join(tmp, name + ".py")
    with open(path, "w") as f:
        f.write(HEAD + body)
    out = os.path.join(tmp, name + ".pt2")
    r = subprocess.run([sys.executable, os.path.join(HERE, "package_model.py"), "--model", path, "--out", out,
                        "--export-only"], capture_output=True, text=True)
    return r, out, path


# Good: two points, one the harness plans itself ("min"), one of the team's own.
r, out, _ = package(DYNAMIC + '''
def shape_inputs():
    return {"min": (torch.tensor([7, 8]), torch.tensor([0])),
            "empty_bags": (torch.tensor([1, 2, 49]), torch.tensor([0, 0, 3, 3]))}
''', "good")
expect(r.returncode == 0, "a model file with shape_inputs() packages" + ("" if r.returncode == 0 else r.stderr[-1500:]))
if r.returncode == 0:
    with zipfile.ZipFile(out) as z:
        manifest_name = next(n for n in z.namelist() if n.endswith("extra/aoti_harness/package.json"))
        m = pm.read_manifest(z.read(manifest_name).decode(), "good.pt2")
        points = m.get("shape_inputs", {})
        expect(sorted(points) == ["empty_bags", "min"], f"the manifest names both points: {sorted(points)}")
        recs = points.get("empty_bags", [])
        expect([rec["sizes"] for rec in recs] == [[3], [4]] and [rec["name"] for rec in recs] == ["ids", "offsets"],
               "each point's records carry the program's input names and the sizes given")
        root = manifest_name[:-len("extra/aoti_harness/package.json")]
        back = [pm.read_raw_tensor(rec, z.read(root + "aoti_harness/" + rec["file"])) for rec in recs]
        expect(len(back) == 2 and back[1].tolist() == [0, 0, 3, 3] and back[0].tolist() == [1, 2, 49],
               "the archive holds the given inputs' values")

# Broken contracts, each named.
cases = [
    ("static", '''
def shape_inputs():
    return {"min": (torch.tensor([7, 8]), torch.tensor([0]))}
''', ["static.py", "static shapes", "dynamic_shapes()"]),
    ("badname", DYNAMIC + '''
def shape_inputs():
    return {"long ids": (torch.tensor([7, 8]), torch.tensor([0]))}
''', ["badname.py", "'long ids'", "letters, digits"]),
    ("outofrange", DYNAMIC + '''
def shape_inputs():
    return {"huge": (torch.arange(100) % 50, torch.tensor([0]))}
''', ["outofrange.py", "shape_inputs()['huge']", "refuses these inputs"]),
    ("count", DYNAMIC + '''
def shape_inputs():
    return {"max": (torch.tensor([7, 8]),)}
''', ["count.py", "shape_inputs()['max']", "takes 2"]),
    ("notadict", DYNAMIC + '''
def shape_inputs():
    return [(torch.tensor([7, 8]), torch.tensor([0]))]
''', ["notadict.py", "returned list", "expected a non-empty dict"]),
]
for name, body, says in cases:
    r, _, _ = package(body, name)
    last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
    expect(r.returncode != 0 and all(s in r.stderr for s in says) and "Traceback" not in r.stderr,
           f"{name}: the build fails naming {says}: {last[:300]}")

if failures:
    raise SystemExit(f"{len(failures)} failed")
