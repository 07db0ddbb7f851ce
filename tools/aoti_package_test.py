"""Unit tests of the packager's modules (tools/aoti_package/), one class per module, with no
AOTI compile: the manifest's schema, the raw tensor format, the model file's contract and
mode, the build key, the archive merge, the compiler's errors and the command line's
refusals. Run by `bazel test //tools:aoti_package_test` (README's test command)."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

import aoti_package  # noqa: E402
import package_model  # noqa: E402
from aoti_package import archive, build_key, cli, common, compile, manifest, model_file, tensors  # noqa: E402

ContractError = aoti_package.ContractError
TMP = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


class Layout(unittest.TestCase):
    def test_the_command_keeps_every_name_of_the_package(self):
        for name in aoti_package.__all__:
            self.assertIs(getattr(package_model, name), getattr(aoti_package, name), name)
        self.assertIn("read_manifest", aoti_package.__all__)

    def test_the_stripped_variables(self):
        self.assertTrue(common.is_stripped_torch_variable("TORCH_LOGS"))
        self.assertFalse(common.is_stripped_torch_variable("TORCHINDUCTOR_CACHE_DIR"))
        self.assertFalse(common.is_stripped_torch_variable("PATH"))


class Manifest(unittest.TestCase):
    def made(self, **kw):
        x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
        rec = tensors.tensor_record(x, "x", "tensors/input_0.bin")
        return manifest.package_manifest("model", {"status": "ok"}, [rec], model_file="m.py", seed=3, **kw)

    def test_written_and_read_back(self):
        m = self.made(inductor_configs={"max_autotune": False})
        back = manifest.read_manifest(manifest.manifest_bytes(m).decode(), "p.pt2")
        self.assertEqual(back["format"], common.PACKAGE_FORMAT)
        self.assertEqual(back["model_name"], "model")
        self.assertEqual(back["seed"], 3)
        self.assertEqual(back["inputs"][0]["sizes"], [2, 3])
        self.assertEqual(back["torch_version"], torch.__version__)

    def test_each_break_is_named(self):
        cases = [
            (lambda m: m.pop("inputs"), "lacks 'inputs'"),
            (lambda m: m.update(format="other/9"), "has format 'other/9'"),
            (lambda m: m.update(seed=True), "field 'seed' is bool, expected int"),
            (lambda m: m["compile"].pop("status"), "compile record lacks a status"),
            (lambda m: m["inputs"][0].pop("dtype"), "inputs[0] lacks 'dtype'"),
            (lambda m: m["inputs"][0].update(device="tpu"), "device 'tpu'"),
        ]
        for breaks, words in cases:
            m = self.made()
            breaks(m)
            with self.assertRaises(ContractError) as e:
                manifest.check_manifest(m, "p.pt2")
            self.assertIn(words, str(e.exception))
            self.assertIn("p.pt2", str(e.exception))

    def test_not_json_is_named(self):
        with self.assertRaises(ContractError) as e:
            manifest.read_manifest("{not json", "broken.pt2")
        self.assertIn("broken.pt2", str(e.exception))


class Tensors(unittest.TestCase):
    def round_trip(self, t):
        rec = tensors.tensor_record(t, "t", "t.bin")
        back = tensors.read_raw_tensor(rec, tensors.raw_bytes(t))
        self.assertEqual(back.dtype, t.dtype)
        self.assertEqual(list(back.shape), list(t.shape))
        self.assertTrue(torch.equal(back, t))
        return rec, back

    def test_dtypes_and_layouts_round_trip(self):
        self.round_trip(torch.randn(3, 4))
        self.round_trip(torch.arange(12, dtype=torch.int64).reshape(3, 4))
        self.round_trip(torch.tensor([True, False]))
        self.round_trip(torch.randn(2, 3).to(torch.bfloat16))
        self.round_trip(torch.empty(0, 5))
        _, back = self.round_trip(torch.randn(4, 3).t())  # transposed: its strides come back
        self.assertEqual(list(back.stride()), [1, 3])
        rec, back = self.round_trip(torch.randn(1, 3).expand(4, 3))  # broadcast: stride 0 kept
        self.assertEqual(rec["strides"], [0, 1])
        self.assertEqual(list(back.stride()), [0, 1])

    def test_a_wrong_size_is_named(self):
        t = torch.randn(2, 2)
        rec = tensors.tensor_record(t, "weights", "w.bin")
        with self.assertRaises(ValueError) as e:
            tensors.read_raw_tensor(rec, tensors.raw_bytes(t)[:-4])
        self.assertIn("'weights': holds 12 bytes, expected 16", str(e.exception))
        with self.assertRaises(ValueError):
            tensors.read_raw_tensor(dict(rec, dtype="float99"), tensors.raw_bytes(t))


class ModelFile(unittest.TestCase):
    def test_the_contract(self):
        with self.assertRaises(ContractError) as e:
            model_file.load_model_file(os.path.join(TMP, "absent.py"))
        self.assertIn("does not exist", str(e.exception))
        no_inputs = write("no_inputs.py", "import torch\ndef make_model():\n    return torch.nn.ReLU()\n")
        with self.assertRaises(ContractError) as e:
            model_file.load_model_file(no_inputs)
        self.assertIn("must define a function example_inputs()", str(e.exception))
        raises = write("raises.py", "raise RuntimeError('no such checkpoint')\n")
        with self.assertRaises(ContractError) as e:
            model_file.load_model_file(raises)
        self.assertIn("raised RuntimeError: no such checkpoint", str(e.exception))

    def test_the_case_is_seeded(self):
        path = write("lin.py", "import torch\ndef make_model():\n    return torch.nn.Linear(4, 2)\n"
                               "def example_inputs():\n    return (torch.randn(3, 4),)\n")
        module = model_file.load_model_file(path)
        a = model_file.build_case(module, path, seed=7)
        b = model_file.build_case(module, path, seed=7)
        self.assertTrue(torch.equal(a[1][0], b[1][0]))

    def test_mode(self):
        net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(), torch.nn.BatchNorm1d(2))
        self.assertEqual(model_file.training_modules(net), {"Dropout": 1, "BatchNorm1d": 1})
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            model_file.set_mode(net, keep_mode=False)
        self.assertFalse(net.training)
        self.assertIn("model.eval() called", err.getvalue())
        net.train()
        with contextlib.redirect_stderr(io.StringIO()):
            model_file.set_mode(net, keep_mode=True)
        self.assertTrue(net.training)

    def test_devices(self):
        model_file.check_device("cpu", "--device")
        with self.assertRaises(ContractError) as e:
            model_file.check_device("gpu0", "--device")
        self.assertIn("--device", str(e.exception))


class BuildKey(unittest.TestCase):
    def test_another_isa_is_refused(self):
        cpuinfo = write("cpuinfo", "processor\t: 0\nflags\t\t: fpu sse4_2 avx avx2 fma avx512f\n")
        key = write("key.json", json.dumps({"torch_version": torch.__version__, "cpu_isa_flags": ["avx", "avx2"]}))
        with self.assertRaises(ContractError) as e:
            build_key.check_build_key(key, cpuinfo)
        self.assertIn("avx512f", str(e.exception))
        same = write("same.json", json.dumps({"torch_version": torch.__version__,
                                              "cpu_isa_flags": build_key.host_isa_flags(cpuinfo)}))
        build_key.check_build_key(same, cpuinfo)


class Archive(unittest.TestCase):
    def test_merge_renames_and_replaces(self):
        from torch.export.pt2_archive._package import PT2ArchiveReader, PT2ArchiveWriter

        src = os.path.join(TMP, "src.pt2")
        with PT2ArchiveWriter(src) as w:
            w.write_bytes(archive.AOTI_DIR + "model/x.so", b"so")
            w.write_bytes("keep.txt", b"old")
        out = os.path.join(TMP, "out.pt2")
        work = tempfile.mkdtemp(dir=TMP)
        archive.merge_archives(out, [archive.compiled_as(src, "mine")], {"keep.txt": b"new"}, work)
        r = PT2ArchiveReader(out)
        names = r.get_file_names()
        self.assertIn(archive.AOTI_DIR + "mine/x.so", names)
        self.assertNotIn(archive.AOTI_DIR + "model/x.so", names)
        self.assertEqual(r.read_bytes("keep.txt"), b"new")
        self.assertFalse(os.listdir(work), "written aside, then moved")

    def test_a_program_returning_a_librarys_pytree_type_is_read(self):
        # As a transformers ModelOutput: the type registers itself with pytree when its module
        # is imported, which a fresh process (the packager's) has not done. load_program imports
        # the module the loader names (each torch's wording) and reads the program, when the
        # model repository declared that module (AOTI_PYTREE_MODULES); else it names the type
        # and the module and imports nothing.
        import pytree_program
        import subprocess
        lib = tempfile.mkdtemp(dir=TMP)
        pt2 = os.path.join(TMP, "returns_out.pt2")
        imported_marker = pytree_program.write(lib, "team_outputs", pt2)
        read = ("import sys; sys.path[:0] = [{lib!r}, {tools!r}]\n"
                "assert 'team_outputs' not in sys.modules\n"
                "from aoti_package import archive\n"
                "ep = archive.load_program({pt2!r}, 'model', '--prebuilt')\n"
                "print(type(ep.module()(__import__('torch').ones(2))).__name__)\n")
        tools = os.path.dirname(os.path.abspath(__file__))
        undeclared = dict(os.environ)
        undeclared.pop("AOTI_PYTREE_MODULES", None)
        done = subprocess.run([sys.executable, "-c", read.format(lib=lib, tools=tools, pt2=pt2)],
                              capture_output=True, text=True, env=undeclared)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("uses the pytree type team_outputs.Out", done.stderr)
        self.assertIn("--aoti_pytree_modules=team_outputs", done.stderr)
        self.assertFalse(os.path.exists(imported_marker), "a module only the file names was imported")
        declared = dict(undeclared, AOTI_PYTREE_MODULES="other.module, team_outputs")
        done = subprocess.run([sys.executable, "-c", read.format(lib=lib, tools=tools, pt2=pt2)],
                              capture_output=True, text=True, env=declared)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "Out")
        # Where the module cannot be imported, the error names it.
        os.remove(os.path.join(lib, "team_outputs.py"))
        done = subprocess.run([sys.executable, "-c", read.format(lib=lib, tools=tools, pt2=pt2)],
                              capture_output=True, text=True, env=declared)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("team_outputs's pytree types, and that module cannot be imported", done.stderr)


class UnwritableProgram(unittest.TestCase):
    """A program torch's serializer refuses (flex attention's block mask): the reason in one
    line, naming the node, and the manifest that records it."""

    def refused(self):
        from torch._export.serde.serialize import SerializeError

        gm = torch.fx.symbolic_trace(lambda x: torch.relu(x) + 1)
        relu = next(n for n in gm.graph.nodes if n.op == "call_function")

        def handle_call_function(node):  # the serializer's frame: it holds the node it writes
            raise SerializeError("Unsupported list/tuple argument type: [<class 'int'>, <class 'torch.fx.node.Node'>, "
                                 "<class 'NoneType'>]")

        try:
            try:
                handle_call_function(relu)
            except SerializeError as inner:
                raise SerializeError(f"Failed serializing node {relu.name} in graph: {relu.format_node()}\n"
                                     " Original exception Traceback ...") from inner
        except SerializeError as e:
            return e

    def test_the_reason_names_the_node_and_the_innermost_message(self):
        reason = archive.unwritable_program_reason(self.refused())
        self.assertTrue(reason.startswith("torch's serializer cannot write the exported program: node 'relu' ("), reason)
        self.assertIn("SerializeError: Unsupported list/tuple argument type: [int, Node, NoneType]", reason)
        self.assertNotIn("Traceback", reason)
        self.assertNotIn("\n", reason)

    def test_the_manifest_records_it(self):
        x = torch.ones(2)
        rec = tensors.tensor_record(x, "x", "tensors/input_0.bin")
        m = manifest.package_manifest("model", {"status": "ok"}, [rec], program_not_held="why")
        back = manifest.read_manifest(manifest.manifest_bytes(m).decode(), "p.pt2")
        self.assertEqual(back["program_not_held"], "why")
        self.assertNotIn("program_not_held", manifest.package_manifest("model", {"status": "ok"}, [rec]))
        m["program_not_held"] = 3
        with self.assertRaisesRegex(ContractError, "program_not_held"):
            manifest.read_manifest(json.dumps(m), "p.pt2")


class Prebuilt(unittest.TestCase):
    def test_which_torch_built_it_and_whether_this_one_can_load_it(self):
        """A shipped compiled model whose shared object calls a function this torch lacks, and an
        exported program recorded by another torch: both named, the package not loadable here."""
        import subprocess
        import zipfile

        from aoti_package import prebuilt

        src = write("calls.cc", 'extern "C" int aoti_torch_no_such_function_here(); extern "C" int aoti_torch_get_numel();\n'
                                'extern "C" int shipped() { return aoti_torch_no_such_function_here() + aoti_torch_get_numel(); }\n'
                                'const char* header = "/opt/team/venv/site-packages/torch/include/torch/csrc/inductor/aoti_runtime/model.h";\n')
        so = os.path.join(TMP, "calls.so")
        subprocess.run(["g++", "-shared", "-fPIC", "-o", so, src], check=True)
        shipped = os.path.join(TMP, "shipped.pt2")
        with zipfile.ZipFile(shipped, "w") as z:
            z.write(so, "shipped/" + archive.AOTI_DIR + "model/abc.wrapper.so")
        program = os.path.join(TMP, "program.pt2")
        with zipfile.ZipFile(program, "w") as z:
            z.writestr("program/models/model.json", json.dumps({"torch_version": "2.99.0+cu999", "graph_module": {}}))
        work = tempfile.mkdtemp(dir=TMP)
        p = prebuilt.provenance(shipped, "model", program, work)
        self.assertEqual(p["built_by"], "2.99.0+cu999")
        self.assertEqual(p["built_by_from"], "the exported program given with it")
        self.assertEqual(p["missing_symbols"], "aoti_torch_no_such_function_here")  # get_numel is torch's
        self.assertEqual(p["compiled_against"], "/opt/team/venv/site-packages/torch/include")
        self.assertEqual(p["this_torch"], torch.__version__)
        # Without an exported program that records it, the builder is not guessed.
        self.assertEqual(prebuilt.provenance(shipped, "model", None, work)["built_by"], "")


class Compile(unittest.TestCase):
    def test_compiler_errors_keep_the_errors(self):
        text = "\n".join(["warning: unused"] * 50 + ["kernel.cpp:3: error: 'foo' was not declared", "  foo();",
                                                     "  ^", "more", "CppCompileError: C++ compile error"])
        picked = compile.compiler_errors(text)
        self.assertIn("error: 'foo' was not declared", picked)
        self.assertIn("  foo();", picked)
        self.assertNotIn("warning: unused", picked)
        self.assertNotIn("CppCompileError", picked)


class CommandLine(unittest.TestCase):
    def refused(self, argv):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as e:
            cli.main(argv)
        self.assertEqual(e.exception.code, 2)
        return err.getvalue()

    def test_wrong_input_is_named(self):
        model = write("m.py", "")
        self.assertIn("expected a path ending in .pt2", self.refused(["--model", model, "--out", "x.zip"]))
        self.assertIn("--inductor-configs", self.refused(["--model", model, "--out", "x.pt2",
                                                          "--inductor-configs", "[1]"]))
        self.assertIn("--inputs goes with --prebuilt", self.refused(["--model", model, "--out", "x.pt2",
                                                                     "--inputs", "i.pt"]))

    def test_a_contract_error_exits_2_with_one_line(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = cli.main(["--model", os.path.join(TMP, "absent.py"), "--out", os.path.join(TMP, "o.pt2")])
        self.assertEqual(rc, 2)
        self.assertIn("ERROR: model file", err.getvalue())


if __name__ == "__main__":
    unittest.main()
