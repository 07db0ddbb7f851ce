"""Unit tests of repro.py's template (reducer/repro/repro_template.py) as the Python module it
is: the rule it judges by in each accuracy mode, the verdict's exit codes, the float64
reference's bound, the random operators it names, and a case filled in as artifacts.cc
fills it. (//reducer:repro_rule_differential_test holds the rule to the C++ one on 6,000
cases; a repro.py run on a reduced case end to end is tools/repro_roundtrip.sh's and the
real-model corpus'. One run here compiles for real: what it leaves in $TMPDIR.)"""
import contextlib
import importlib.util
import io
import os
import re
import subprocess
import sys
import tempfile
import unittest

import torch

TEMPLATE = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "repro_template.py")
# The harness's one table of failure classes (C++): which of them the reducer reduces.
CLASSES_CC = (sys.argv.pop(1) if len(sys.argv) > 1 else
              os.path.join(os.path.dirname(__file__), "..", "..", "harness", "util", "failure_class.cc"))
# The harness's inductor-config keys, beside every repro.py.
FALLBACKS = (sys.argv.pop(1) if len(sys.argv) > 1 else
             os.path.join(os.path.dirname(__file__), "..", "..", "tools", "aoti_aten_fallbacks.py"))
TMP = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))


def load(case=None, name="repro_under_test"):
    """The template as a module; `case` replaces the lines between its case markers."""
    with open(TEMPLATE) as f:
        text = f.read()
    if case is not None:
        text = re.sub(r"(# --- the case:[^\n]*\n).*?(# --- end of the case ---)", lambda m: m.group(1) + case +
                      "\n" + m.group(2), text, flags=re.S)
    path = os.path.join(TMP, name + ".py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


R = load()


def fp64_of(t):
    return t.to(torch.float64)


class Rule(unittest.TestCase):
    def test_fp64_mode(self):
        eager = torch.randn(64)
        acc = {"mode": R.FP64, "tolerance": 1e-3}
        self.assertEqual(R.judge(eager, eager.clone(), fp64_of(eager), acc)[0], "passes")
        self.assertEqual(R.judge(eager, eager + 1.0, fp64_of(eager), acc)[0], "accuracy")
        verdict, why = R.judge(eager, eager[:10], fp64_of(eager), acc)
        self.assertEqual(verdict, "accuracy")
        self.assertIn("compiled torch.float32[10], eager torch.float32[64]", why)

    def test_strict_mode(self):
        eager = torch.ones(8)
        acc = {"mode": R.STRICT, "tolerance": 1e-2}
        self.assertEqual(R.judge(eager, eager + 5e-3, None, acc)[0], "passes")
        self.assertEqual(R.judge(eager, eager + 5e-2, None, acc)[0], "accuracy")

    def test_assert_close_mode_takes_the_tests_tolerances(self):
        eager = torch.ones(8)
        default = {"mode": R.ASSERT_CLOSE, "tolerance": 1e-3}
        self.assertEqual(R.judge(eager, eager + 1e-3, None, default)[0], "accuracy")  # float32: rtol 1.3e-6
        loose = dict(default, rtol=1e-2, atol=1e-2)
        self.assertEqual(R.judge(eager, eager + 1e-3, None, loose)[0], "passes")
        self.assertEqual(R.assert_close_tolerances(eager, {"rtol": -1, "atol": None}), (1.3e-6, 1e-5))

    def test_non_floating_outputs(self):
        a, b = torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4])
        self.assertEqual(R.judge(a, b, None, {"mode": R.FP64, "tolerance": 1e-3, "ignore_non_fp": True})[0], "passes")
        self.assertEqual(R.judge(a, b, None, {"mode": R.FP64, "tolerance": 1e-3, "exact_non_fp": True})[0],
                         "accuracy")
        self.assertEqual(R.judge(a, a.clone(), None, {"mode": R.FP64, "tolerance": 1e-3, "exact_non_fp": True})[0],
                         "passes")

    def test_an_unreliable_reference_is_named(self):
        torch.manual_seed(0)
        fp64 = torch.randn(256, dtype=torch.float64)
        eager = (fp64 + 0.5 * torch.randn(256, dtype=torch.float64)).float()  # eager far from float64
        compiled = (fp64 + 0.4 * torch.randn(256, dtype=torch.float64)).float()
        relative = R.unreliable_reference(eager, compiled, fp64, 1e-3)
        self.assertIsNotNone(relative)
        self.assertGreater(relative, R.UNRELIABLE_REFERENCE)
        self.assertIsNone(R.unreliable_reference(eager, eager.clone(), fp64, 1e-3))


class Verdict(unittest.TestCase):
    def observed(self, module, reason, message=""):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = module.observed(reason, message)
        return code, out.getvalue()

    def test_exit_codes(self):
        self.assertEqual(R.FAILURE_CLASS, "accuracy")
        code, text = self.observed(R, "accuracy", "output 0 differs")
        self.assertEqual(code, 1)
        self.assertIn("the failure REPRODUCES", text)
        self.assertEqual(self.observed(R, "passes")[0], 0)
        code, text = self.observed(R, "compile error", "g++ failed")
        self.assertEqual(code, 2)
        self.assertIn("expected accuracy; it does not reproduce", text)

    def test_a_filled_case_judges_its_own_class_and_check_str(self):
        case = ('FAILURE_CLASS = "compile error"\nCHECK_STR = "error: \'foo\'"\nINDUCTOR_CONFIGS = json.loads("{}")\n'
                'MODEL = "model"\nOPTIONS = {"accuracy": {"mode": "strict", "tolerance": 0.01}, '
                '"runner": {"op_libraries": ["libops.so"], "env": [], "seed": 5}}\nDEVICE = "cpu"\n'
                'FP64, STRICT, ASSERT_CLOSE, SQNR = "fp64", "strict", "assert_close", "sqnr"\nUNRELIABLE_REFERENCE = 0.1')
        filled = load(case, "repro_filled")
        self.assertEqual(filled.ACCURACY, {"mode": "strict", "tolerance": 0.01})
        self.assertEqual(filled.SEED, 5)
        self.assertEqual(filled.OP_LIBRARIES, [os.path.join(TMP, "libops.so")])  # beside repro.py
        self.assertEqual(self.observed(filled, "compile error", "x.cpp: error: 'foo' was not declared")[0], 1)
        self.assertEqual(self.observed(filled, "compile error", "another error")[0], 2)


class RandomOperators(unittest.TestCase):
    def test_named_in_subgraphs_too(self):
        class M(torch.nn.Module):
            def forward(self, x):
                def noisy(x):
                    return x + torch.rand_like(x)

                def quiet(x):
                    return x * 2

                return torch.cond(x.sum() > 0, noisy, quiet, (x,)) + torch.randn(3)

        ep = torch.export.export(M(), (torch.ones(3),))
        found = R.random_operators(ep)
        self.assertEqual(len(found), 2, found)
        self.assertEqual(R.random_operators(torch.export.export(torch.nn.ReLU(), (torch.ones(3),))), [])


def reduced_classes():
    """The classes harness/util/failure_class.cc marks as the compiler's failure (reduced)."""
    with open(CLASSES_CC) as f:
        rows = re.findall(r'\{FailureClass::k\w+, "([^"]+)", (true|false), (true|false)\}', f.read())
    return [name for name, compiler, _ in rows if compiler == "true"]


def filled_case(failure_class, device="cpu", timeout_s=5):
    return (f'FAILURE_CLASS = "{failure_class}"\nCHECK_STR = ""\nINDUCTOR_CONFIGS = json.loads("{{}}")\n'
            'MODEL = "model"\nOPTIONS = {"accuracy": {"mode": "fp64", "tolerance": 1e-3}, '
            f'"runner": {{"op_libraries": [], "env": [], "timeout_s": {timeout_s}}}}}\n'
            f'DEVICE = "{device}"\nFP64, STRICT, ASSERT_CLOSE, SQNR = "fp64", "strict", "assert_close", "sqnr"\n'
            'UNRELIABLE_REFERENCE = 0.1')


class EveryReducedClass(unittest.TestCase):
    """Every class the reducer reduces (the C++ table's) comes out of repro.py as that class:
    a repro of it exits 1, never "fails differently" (2). Each is made as the compiled model
    makes it: the compile raises, or the child that loads and runs the package exits so."""

    def setUp(self):
        self.ep = torch.export.export(torch.nn.ReLU(), (torch.randn(4),))
        self.tmp = tempfile.TemporaryDirectory(dir=TMP)
        self.addCleanup(self.tmp.cleanup)

    def outcome(self, failure_class, child=None, compile_raises=None):
        """repro.py's exit code for a case of `failure_class`, the child faked by `child`
        (a function of the command, returning a CompletedProcess or raising)."""
        module = load(filled_case(failure_class), "repro_" + re.sub(r"\W", "_", failure_class))
        if compile_raises is not None:
            def compile_package(ep, package):
                raise compile_raises
        else:
            def compile_package(ep, package):
                with open(package, "w") as f:
                    f.write("a compiled package")
        module.compile_package = compile_package
        if child is not None:
            module.subprocess.run = child
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                return module.compile_and_judge(self.ep, self.tmp.name), out.getvalue()
        finally:
            module.subprocess.run = subprocess_run

    def exits(self, returncode, stderr="", outputs=None):
        def run(argv, **kwargs):
            if outputs is not None:
                torch.save(outputs, argv[-1])
            return subprocess.CompletedProcess(argv, returncode, "", stderr)
        return run

    def test_the_table_is_read(self):
        self.assertEqual(sorted(reduced_classes()),
                         sorted(["compile error", "load error", "runtime error", "signal", "timeout", "accuracy"]))

    def test_each_reduced_class_reproduces_as_itself(self):
        x = self.ep.example_inputs[0][0]

        def timeout(argv, **kwargs):
            raise subprocess.TimeoutExpired(argv, 5)

        made = {
            "compile error": dict(compile_raises=RuntimeError("C++ compile error: g++ failed")),
            "load error": dict(child=self.exits(17, "RuntimeError: Error in dlopen: undefined symbol")),
            "runtime error": dict(child=self.exits(1, "RuntimeError: the kernel raised")),
            "signal SIGSEGV": dict(child=self.exits(-11)),
            "timeout": dict(child=timeout),
            "accuracy": dict(child=self.exits(0, outputs=torch.relu(x) + 1.0)),
        }
        self.assertEqual(sorted(c.split(" ")[0] for c in made), sorted(c.split(" ")[0] for c in reduced_classes()),
                         "a class the reducer reduces has no row here")
        for failure_class, how in made.items():
            with self.subTest(failure_class):
                code, printed = self.outcome(failure_class, **how)
                self.assertIn(f"repro.py: {failure_class}", printed)
                self.assertEqual(code, 1, printed)
        code, printed = self.outcome("accuracy", child=self.exits(0, outputs=torch.relu(x)))
        self.assertEqual(code, 0, printed)

    def test_no_cuda_device_is_cannot_run_here(self):
        if torch.cuda.is_available():
            self.skipTest("this host has a CUDA device")
        module = load(filled_case("accuracy", device="cuda"), "repro_cuda")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(module.main(), 3)
        self.assertIn("cannot run here", out.getvalue())

    def test_the_childs_temporary_directory_is_inside_the_runs(self):
        """torch's loader extracts a package under $TMPDIR and a child that crashes cannot remove
        it: the child's $TMPDIR is inside the run's directory, which the run removes."""
        seen = {}

        def child(argv, **kwargs):
            seen["tmp"] = kwargs["env"]["TMPDIR"]
            return subprocess.CompletedProcess(argv, -6, "", "")
        code, printed = self.outcome("signal SIGABRT", child=child)
        self.assertEqual(code, 1, printed)
        self.assertTrue(seen["tmp"].startswith(self.tmp.name + os.sep), seen)

    def test_the_run_leaves_nothing_in_the_temporary_directory(self):
        module = load(filled_case("compile error"), "repro_tmp")
        tmpdir = tempfile.mkdtemp(dir=TMP)
        module.tempfile.tempdir = tmpdir
        module.load_program = lambda: self.ep

        def compile_package(ep, package):
            with open(package, "w") as f:
                f.write("half a package")
            raise RuntimeError("C++ compile error")
        module.compile_package = compile_package
        env = dict(os.environ)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(module.main(), 1)
        finally:
            module.tempfile.tempdir = None
            os.environ.clear()
            os.environ.update(env)
        self.assertEqual(os.listdir(tmpdir), [])


class PytreeModules(unittest.TestCase):
    """repro.pt2's program returns a library's pytree type: repro.py imports its module only
    when the test declared it (runner.pytree_modules) or $AOTI_PYTREE_MODULES names it; else it
    names the type and the module, imports nothing and exits 3 (cannot run here)."""

    def test_only_a_declared_module_is_imported(self):
        tools = os.path.dirname(os.path.abspath(FALLBACKS))  # tools/: pytree_program.py is beside the fallbacks
        sys.path.insert(0, tools)
        self.addCleanup(sys.path.remove, tools)
        import pytree_program
        lib = tempfile.mkdtemp(dir=TMP)
        pt2 = os.path.join(lib, "repro.pt2")
        marker = pytree_program.write(lib, "repro_team_outputs", pt2)
        sys.path.insert(0, lib)
        self.addCleanup(sys.path.remove, lib)
        module = load(filled_case("accuracy"), "repro_pytree")
        module.PROGRAM = pt2
        env = dict(os.environ)
        os.environ.pop("AOTI_PYTREE_MODULES", None)
        try:
            out = io.StringIO()
            with contextlib.redirect_stdout(out), self.assertRaises(SystemExit) as stopped:
                module.load_program()
            self.assertEqual(stopped.exception.code, 3)
            self.assertIn("the pytree type repro_team_outputs.Out", out.getvalue())
            self.assertIn("AOTI_PYTREE_MODULES=repro_team_outputs python repro.py", out.getvalue())
            self.assertFalse(os.path.exists(marker), "a module only the file names was imported")
            module.RUNNER = dict(module.RUNNER, pytree_modules=["repro_team_outputs"])
            ep = module.load_program()
            self.assertTrue(os.path.exists(marker))
            self.assertEqual(type(ep.module()(torch.ones(2))).__name__, "Out")
        finally:
            os.environ.clear()
            os.environ.update(env)


class EndToEnd(unittest.TestCase):
    """A repro.py run as a user makes it (python repro.py, a real AOTI compile, the compiled
    model run in its child), with $TMPDIR pointed at an empty directory: nothing is left in it,
    the headers inductor precompiles included, whether or not TORCHINDUCTOR_CACHE_DIR is set."""

    def test_a_real_run_leaves_nothing_in_the_temporary_directory(self):
        import shutil
        work = tempfile.mkdtemp(dir=TMP)
        repro = os.path.join(work, "repro")
        os.makedirs(repro)
        with open(TEMPLATE) as f:
            text = f.read()
        text = re.sub(r"(# --- the case:[^\n]*\n).*?(# --- end of the case ---)",
                      lambda m: m.group(1) + filled_case("accuracy", timeout_s=300) + "\n" + m.group(2), text, flags=re.S)
        with open(os.path.join(repro, "repro.py"), "w") as f:
            f.write(text)
        shutil.copy(FALLBACKS, os.path.join(repro, "aoti_aten_fallbacks.py"))
        torch.export.save(torch.export.export(torch.nn.ReLU(), (torch.randn(4),)), os.path.join(repro, "repro.pt2"))
        for cache in [None, os.path.join(work, "inductor_cache")]:
            with self.subTest(TORCHINDUCTOR_CACHE_DIR=cache):
                counted = tempfile.mkdtemp(dir=work)
                env = dict(os.environ, TMPDIR=counted)
                env.pop("TORCHINDUCTOR_CACHE_DIR", None)
                if cache:
                    env["TORCHINDUCTOR_CACHE_DIR"] = cache
                proc = subprocess.run([sys.executable, os.path.join(repro, "repro.py")], env=env, capture_output=True,
                                      text=True, timeout=900)
                # A healthy relu: the accuracy failure does not reproduce (exit 0).
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr[-3000:])
                self.assertEqual(os.listdir(counted), [])
                if cache:
                    self.assertTrue(os.path.isdir(os.path.join(cache, "precompiled_headers")),
                                    "the precompiled headers go where TORCHINDUCTOR_CACHE_DIR says")


subprocess_run = subprocess.run

if __name__ == "__main__":
    unittest.main()
