"""repro_standalone.py, the torch-only repro (reducer/repro/standalone.py), on repro
directories made as the reducer makes them (repro.py's template with its case filled in,
repro.pt2, aoti_aten_fallbacks.py).

Without a compile: the emitted module is the program (its eager outputs equal the exported
program's, bit for bit) for a straight line with parameters and a buffer it mutates, a
`cond` with a data-dependent size after it and a dynamic batch, a `while_loop`, and a
nested `cond`; small tensors are written out exactly, a large one goes to the file beside
it, which the header names; the file imports torch and the standard library only; a case
the emitter cannot write (the harness's own inductor keys) gets a file that says so at its
top and exits 3. A large tensor whose values do not matter can be drawn from a seed instead
(the same values on every construction; small ones stay exact). With real AOTI compiles
(`standalone.py --verify`: the file copied alone into an empty directory and run with
nothing but torch importable): inductor's planted relu bug reproduces, an accuracy drift
with the weights drawn from a seed in one run, a compile error with exact values; the same
program without the bug passes (exit 0). upstream_issue.md (--issue): the title names the op,
the class and the stage, the script is inline whole, the workaround and the regression
range come from summary.json, the observation from --verify's record where there is one,
and the versions from torch.utils.collect_env.
"""
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(HERE, "repro_template.py")
FALLBACKS = (sys.argv.pop(1) if len(sys.argv) > 1 else
             os.path.join(HERE, "..", "..", "tools", "aoti_aten_fallbacks.py"))
sys.path.insert(0, HERE)
import standalone  # noqa: E402

TMP = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
STDLIB_AND_TORCH = {"atexit", "math", "os", "shutil", "signal", "subprocess", "sys", "tempfile", "torch"}


def repro_dir(ep, failure_class="accuracy", configs="{}", check_str="", mode="fp64"):
    """A repro directory as reducer/artifacts.cc writes one."""
    d = tempfile.mkdtemp(dir=TMP)
    with open(TEMPLATE) as f:
        text = f.read()
    case = (f'FAILURE_CLASS = "{failure_class}"\nCHECK_STR = {check_str!r}\n'
            f'INDUCTOR_CONFIGS = json.loads({configs!r})\nMODEL = "model"\n'
            f'OPTIONS = {{"accuracy": {{"mode": "{mode}", "tolerance": 1e-3}}, '
            '"runner": {"op_libraries": [], "env": [], "timeout_s": 300}}\n'
            'DEVICE = "cpu"\nFP64, STRICT, ASSERT_CLOSE, SQNR = "fp64", "strict", "assert_close", "sqnr"\n'
            'UNRELIABLE_REFERENCE = 0.1')
    text = re.sub(r"(# --- the case:[^\n]*\n).*?(# --- end of the case ---)",
                  lambda m: m.group(1) + case + "\n" + m.group(2), text, flags=re.S)
    with open(os.path.join(d, "repro.py"), "w") as f:
        f.write(text)
    shutil.copy(FALLBACKS, os.path.join(d, "aoti_aten_fallbacks.py"))
    torch.export.save(ep, os.path.join(d, "repro.pt2"))
    return d


def write(d):
    """Writes d/repro_standalone.py through the command; (exit status, its text)."""
    proc = subprocess.run([sys.executable, os.path.join(HERE, "standalone.py"), d], capture_output=True, text=True)
    path = os.path.join(d, "repro_standalone.py")
    text = ""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    return proc.returncode, text, proc.stdout + proc.stderr


def as_module(d, name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, os.path.join(d, "repro_standalone.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Straight(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.big = torch.nn.Parameter(torch.randn(100))
        self.register_buffer("steps", torch.zeros(1))

    def forward(self, x, scale: int):
        self.steps.add_(1)
        return torch.relu(self.fc(x)) * scale + self.big[:3] + self.steps


class CondThenMask(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = torch.cond(x.sum() > 0, lambda a: torch.relu(self.fc(a)), lambda a: a * 2, (x,))
        kept = y[y > 0.1]
        return y.sum(0), kept.sum() * 3 - 0.5


class Loop(torch.nn.Module):
    def forward(self, x):
        def cond_fn(i, h):
            return i < 3

        def body_fn(i, h):
            return i + 1, torch.relu(h * 0.5 + 0.1)

        return torch._higher_order_ops.while_loop(cond_fn, body_fn, (torch.tensor(0), x))[1]


class Nested(torch.nn.Module):
    def forward(self, x):
        def outer(a):
            return torch.cond(a.mean() > 0, lambda b: b.sin(), lambda b: b.cos(), (a,))

        return torch.cond(x.sum() > 0, outer, lambda a: a + 1, (x,))


def exported(module, args, dynamic_shapes=None):
    torch.manual_seed(0)
    return torch.export.export(module, args, dynamic_shapes=dynamic_shapes)


class Emitted(unittest.TestCase):
    """The emitted Repro module computes what the exported program computes."""

    def same_as_program(self, ep, name):
        d = repro_dir(ep)
        code, text, out = write(d)
        self.assertEqual(code, 0, out)
        tree = ast.parse(text)
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        self.assertLessEqual(imported, STDLIB_AND_TORCH, f"the file imports only torch and the standard library: {imported}")
        module = as_module(d, name)
        args, kwargs = ep.example_inputs
        with torch.no_grad():
            want = torch.utils._pytree.tree_leaves(ep.module()(*args, **kwargs))
            got = torch.utils._pytree.tree_leaves(module.Repro()(*module.INPUTS))
        self.assertEqual(len(want), len(got))
        for w, g in zip(want, got):
            self.assertTrue(torch.equal(w, g), f"{name}: {w} != {g}")
        return d, text, module

    def test_straight_line_parameters_and_a_mutated_buffer(self):
        ep = exported(Straight(), (torch.randn(2, 4), 3))
        d, text, module = self.same_as_program(ep, "straight")
        self.assertIn("repro_standalone_tensors.pt", text.splitlines()[3], "the header names the file beside it")
        self.assertIn("big", text.splitlines()[3])
        beside = torch.load(os.path.join(d, "repro_standalone_tensors.pt"))
        self.assertTrue(torch.equal(beside["big"], ep.state_dict["big"]))
        # The small weight is written out exactly: bit for bit the program's.
        self.assertTrue(torch.equal(module.Repro().fc_weight, ep.state_dict["fc.weight"]))

    def test_cond_then_a_data_dependent_size_with_a_dynamic_batch(self):
        ep = exported(CondThenMask(), (torch.randn(5, 4),), dynamic_shapes=({0: torch.export.Dim.DYNAMIC},))
        _, text, module = self.same_as_program(ep, "cond_mask")
        self.assertIn("torch.ops.higher_order.cond", text)
        self.assertEqual(module.DYNAMIC_SHAPES, ({0: torch.export.Dim.DYNAMIC},))

    def test_while_loop(self):
        _, text, _ = self.same_as_program(exported(Loop(), (torch.randn(3),)), "loop")
        self.assertIn("torch.ops.higher_order.while_loop", text)

    def test_nested_cond(self):
        self.same_as_program(exported(Nested(), (torch.randn(3),)), "nested")

    def test_values_that_do_not_matter_drawn_from_a_seed(self):
        ep = exported(Straight(), (torch.randn(2, 4), 3))
        d = repro_dir(ep)
        repro = standalone.load_repro(d)
        out = os.path.join(d, "seeded.py")
        written, why, drawn = standalone.write_standalone(repro, out, seeded=True)
        self.assertTrue(written, why)
        self.assertEqual(drawn, ["big"])
        self.assertFalse(os.path.exists(os.path.join(d, "seeded_tensors.pt")), "nothing beside it")
        with open(out) as f:
            header = f.read().split("import", 1)[0]
        self.assertIn("Drawn from a seed", header)
        import importlib.util

        spec = importlib.util.spec_from_file_location("seeded", out)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        a, b = module.Repro(), module.Repro()
        self.assertEqual(a.big.shape, ep.state_dict["big"].shape)
        self.assertTrue(torch.equal(a.big, b.big), "the same values on every construction")
        self.assertFalse(torch.equal(a.big, ep.state_dict["big"]))
        self.assertTrue(torch.equal(a.fc_weight, ep.state_dict["fc.weight"]), "small tensors stay exact")

    def test_the_upstream_issue_names_the_op_class_and_stage_and_holds_the_script(self):
        ep = exported(torch.nn.ReLU(), (torch.randn(4),))
        d = repro_dir(ep, configs='{"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"}')
        summary = {"reduced": True, "failure_class": "accuracy", "nodes_before": 27, "nodes_after": 1,
                   "package": "block.pt2", "ops": ["aten.relu.default"],
                   "stage": {"ran": True, "culprit_op": "aten.relu.default",
                             "stage": "lowering or codegen (the scalar code too)",
                             "stage_reason": "it passes as an ATen kernel", "workaround_verified": True,
                             "workaround_what": "relu as an ATen fallback",
                             "workaround": {"aoti_harness.aten_fallbacks": "[\"aten.relu.default\"]"}},
                   "torch_bisect": {"newest_passing": "2.12.1", "oldest_failing": "2.13.0"}}
        with open(os.path.join(d, "summary.json"), "w") as f:
            json.dump(summary, f)
        proc = subprocess.run([sys.executable, os.path.join(HERE, "standalone.py"), d, "--issue"],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        with open(os.path.join(d, "upstream_issue.md")) as f:
            md = f.read()
        with open(os.path.join(d, "repro_standalone.py")) as f:
            script = f.read()
        cap = torch.backends.cpu.get_cpu_capability()
        self.assertEqual(md.splitlines()[0], f"# [AOTI] relu: accuracy drift in lowering or codegen (CPU, {cap})")
        self.assertIn("```python\n" + script.rstrip("\n") + "\n```", md, "the script inline, whole")
        self.assertIn("1 node, reduced from 27 of `block.pt2`", md)
        self.assertIn("**Expected:**", md)
        self.assertIn("not run alone when this text was written", md, "no --verify record: it says so")
        self.assertIn('relu as an ATen fallback: `{"aoti_harness.aten_fallbacks": "[\\"aten.relu.default\\"]"}`', md)
        self.assertIn("passes with torch 2.12.1, fails from 2.13.0", md)
        versions = md.split("### Versions", 1)[1]
        self.assertIn(f"PyTorch version: {torch.__version__}", versions, "collect_env's report")
        self.assertNotIn("pip list", versions)
        # With a --verify record beside the file, the observation is the record's.
        with open(os.path.join(d, "repro_standalone.json"), "w") as f:
            json.dump({"reproduces": True, "verdict": "accuracy: RMSE 0.4", "seconds": 31.5, "exit_code": 1}, f)
        text = standalone.write_issue(standalone.load_repro(d), d, os.path.join(d, "repro_standalone.py"),
                                      os.path.join(d, "again.md"))
        self.assertIn("exits 1 (`accuracy: RMSE 0.4`)", text)
        self.assertIn("reproduced in 31.5 s", text)

    def test_a_case_it_cannot_write_says_so_and_exits_3(self):
        d = repro_dir(exported(torch.nn.ReLU(), (torch.randn(4),)),
                      configs='{"aoti_harness.aten_fallbacks": ["aten.relu"]}')
        code, text, out = write(d)
        self.assertEqual(code, 3, out)
        self.assertIn("NOT WRITTEN", text.splitlines()[0])
        self.assertIn("aoti_harness.aten_fallbacks", text.splitlines()[1])
        run = subprocess.run([sys.executable, os.path.join(d, "repro_standalone.py")], capture_output=True, text=True)
        self.assertEqual(run.returncode, 3)
        self.assertIn("cannot be written", run.stdout)


class Block(torch.nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.fc = torch.nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.fc(x)) + 1.0


def run_alone(d):
    """repro_standalone.py (and its tensors file) copied into an empty directory and run with
    nothing of the harness importable: (exit status, output)."""
    alone = tempfile.mkdtemp(dir=TMP)
    for name in os.listdir(d):
        if name.startswith("repro_standalone"):
            shutil.copy(os.path.join(d, name), alone)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["TMPDIR"] = alone
    proc = subprocess.run([sys.executable, "repro_standalone.py"], cwd=alone, env=env, capture_output=True,
                          text=True, timeout=900)
    standalone.note_compile("standalone", 0.0)
    return proc.returncode, proc.stdout + proc.stderr[-3000:]


class Reproduces(unittest.TestCase):
    """Real compiles: the file alone, only torch (standalone.py --verify, as a user runs it)."""

    def verify(self, d, *flags):
        proc = subprocess.run([sys.executable, os.path.join(HERE, "standalone.py"), d, "--verify", *flags],
                              capture_output=True, text=True, timeout=1800)
        with open(os.path.join(d, "repro_standalone.json")) as f:
            return proc.returncode, json.load(f), proc.stdout + proc.stderr[-3000:]

    def test_planted_accuracy_bug_reproduces_with_drawn_weights_and_the_healthy_twin_passes(self):
        ep = exported(Block(16), (torch.randn(4, 16),))  # 256 weights: more than are written out
        planted = repro_dir(ep, configs='{"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"}')
        code, record, out = self.verify(planted)
        self.assertEqual(code, 0, out)
        self.assertTrue(record["reproduces"], record)
        self.assertEqual(record["values"], "seeded", "a relu's drift does not depend on the weights' values")
        self.assertEqual(record["runs"], 1)
        self.assertIn("REPRODUCES", record["output"])
        self.assertEqual(record["verdict"], "accuracy", record)
        healthy = repro_dir(ep)
        self.assertEqual(write(healthy)[0], 0)
        code, out = run_alone(healthy)
        self.assertEqual(code, 0, out)
        self.assertIn("repro_standalone.py: passes", out)

    def test_planted_compile_error_reproduces_and_a_kept_cache_serves_no_failed_compile(self):
        """Through --inductor-cache, torch's cache kept across runs (the reducer passes one): a
        compile error is never served from it, so a second run compiles, and fails, again."""
        cache = tempfile.mkdtemp(dir=TMP)
        d = repro_dir(exported(Block(), (torch.randn(4, 8),)), failure_class="compile error",
                      configs='{"cpp.inject_relu_bug_TESTING_ONLY": "compile_error"}')
        code, record, out = self.verify(d, "--issue", "--inductor-cache", cache)
        self.assertEqual(code, 0, out)
        self.assertTrue(record["reproduces"] and record["values"] == "exact", record)
        self.assertEqual(record["verdict"], "compile error", record)
        self.assertEqual(record["inductor_cache"], cache)
        self.assertTrue(os.listdir(cache), "torch wrote into the kept cache")
        # The issue's observation is the run's: confirmed alone, with only torch.
        with open(os.path.join(d, "upstream_issue.md")) as f:
            md = f.read()
        self.assertTrue(md.startswith("# [AOTI] program: compile error (CPU, "), md.splitlines()[0])  # three ops, no summary.json
        self.assertIn("exits 1 (`compile error`)", md)
        self.assertIn(f"reproduced in {record['seconds']} s", md)
        code, record, out = self.verify(d, "--inductor-cache", cache)
        self.assertEqual((code, record["verdict"]), (0, "compile error"), f"the second run, through the cache: {out}")


class RunAlone(unittest.TestCase):
    """standalone.run_alone's environment, with a stand-in for the file (no compile)."""

    def test_the_cache_it_is_given_or_one_of_its_own(self):
        d = tempfile.mkdtemp(dir=TMP)
        path = os.path.join(d, "repro_standalone.py")
        with open(path, "w") as f:
            f.write("import os, sys\nprint(os.environ.get('TORCHINDUCTOR_CACHE_DIR'), os.environ.get('PYTHONPATH'),\n"
                    "      os.path.realpath(os.environ['TMPDIR']) == os.path.realpath(os.getcwd()),\n"
                    "      os.environ['TMPDIR'])\nsys.exit(1)\n")
        kept = os.path.join(tempfile.mkdtemp(dir=TMP), "kept")
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR="/somewhere/else", PYTHONPATH="/harness")
        env.pop("AOTI_COMPILE_LEDGER", None)  # no compile here for CI's count
        saved = dict(os.environ)
        try:
            os.environ.clear()
            os.environ.update(env)
            code, out, _ = standalone.run_alone(path, 60, kept)
            self.assertEqual(code, 1)
            self.assertEqual(out.split(), [os.path.join(kept, "inductor"), "None", "False", os.path.join(kept, "tmp")])
            self.assertTrue(os.path.isdir(os.path.join(kept, "tmp")))
            code, out, _ = standalone.run_alone(path, 60)
            self.assertEqual(out.split()[:3], ["None", "None", "True"], "none given: torch's defaults, in the empty directory")
        finally:
            os.environ.clear()
            os.environ.update(saved)


if __name__ == "__main__":
    unittest.main()
