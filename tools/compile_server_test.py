"""compile_server's diagnostic compile (aoti_harness.one_kernel_per_node): the reducer's key is
taken out of the configs and never reaches inductor; under it a chain of pointwise ops that
inductor fuses into one kernel becomes one kernel per node, so that a planted compile error
is named by the kernel of its node alone; inductor's classes are put back after it. Run by
//tools:compile_server_test."""
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compile_server  # noqa: E402
import torch  # noqa: E402
from aoti_aten_fallbacks import ContractError, PlantedBug, split_configs  # noqa: E402


class Chain(torch.nn.Module):
    def forward(self, x):
        h = torch.sin(x * 1.25 + 0.5)
        return torch.relu(h - 0.25).sum(-1)


class Configs(unittest.TestCase):
    def test_the_key_is_taken_out_and_fusion_turned_off(self):
        configs = {compile_server.ONE_KERNEL_PER_NODE: True, "cpp.threads": 1}
        self.assertIsInstance(compile_server.one_kernel_per_node(configs), compile_server.OneKernelPerNode)
        self.assertEqual(configs, {"cpp.threads": 1, "max_fusion_size": 1, "force_disable_caches": True})
        configs = {"cpp.threads": 1}
        compile_server.one_kernel_per_node(configs)
        self.assertEqual(configs, {"cpp.threads": 1})
        with self.assertRaises(ContractError) as e:
            compile_server.one_kernel_per_node({compile_server.ONE_KERNEL_PER_NODE: "yes"})
        self.assertIn("expected true or false", str(e.exception))


class Split(unittest.TestCase):
    def compile_error(self, split):
        """The functions the compiler's errors name, the planted sin's code not C++."""
        ep = torch.export.export(Chain(), (torch.randn(8, 37),))
        configs = {"aoti_harness.plant_bug_TESTING_ONLY": {"op": "sin", "kind": "compile_error"}}
        if split:
            configs[compile_server.ONE_KERNEL_PER_NODE] = True
        context = compile_server.one_kernel_per_node(configs)
        inductor, _, _ = split_configs(configs)
        with tempfile.TemporaryDirectory() as tmp, context, PlantedBug.from_configs(configs):
            with self.assertRaises(Exception) as e:
                torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tmp, "m.pt2"),
                                                        inductor_configs=inductor)
        return sorted(set(re.findall(r"void (cpp_\w+)\(", str(e.exception))))

    def test_the_failing_kernel_holds_the_culprit_alone(self):
        from torch._inductor.codegen.cpp import CppScheduling
        from torch._inductor.graph import GraphLowering

        before = (CppScheduling.MAX_FUSED_KERNEL_ARGS_NUM, GraphLowering.run_node)
        fused = self.compile_error(split=False)
        self.assertEqual(len(fused), 1)
        self.assertIn("sin", fused[0])
        self.assertIn("mul", fused[0])  # fused: the name holds the chain
        split = self.compile_error(split=True)
        self.assertEqual(len(split), 1)
        self.assertRegex(split[0], r"^cpp_fused_sin_\d+$")
        # Put back after the compile, even a failed one.
        self.assertEqual((CppScheduling.MAX_FUSED_KERNEL_ARGS_NUM, GraphLowering.run_node), before)


if __name__ == "__main__":
    unittest.main()
