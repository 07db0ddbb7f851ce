"""aoti_aten_fallbacks: the one implementation of the harness's own inductor_configs keys.

What a workaround.md says is what the verified compile did: split_configs turns the caches
off wherever an operator falls back or loses its decomposition (a warm inductor cache would
otherwise hand back the compile without them), AtenFallbacks puts inductor's tables back
after one compile, and a malformed key is a ContractError naming it. A planted bug
(aoti_harness.plant_bug_TESTING_ONLY) changes inductor's code for its op only, in the
scalar and the vectorized code, and only for one compile. Run by
//tools:aoti_aten_fallbacks_test.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aoti_aten_fallbacks as fb  # noqa: E402
import torch  # noqa: E402


class SplitConfigs(unittest.TestCase):
    def test_a_fallback_turns_inductor_caches_off_and_is_not_passed_to_inductor(self):
        configs, fallbacks, undecomposed = fb.split_configs(
            {fb.ATEN_FALLBACKS: '["aten.relu.default"]', "max_autotune": False})
        self.assertEqual(configs, {"max_autotune": False, "force_disable_caches": True})
        self.assertEqual(fallbacks, [torch.ops.aten.relu.default])
        self.assertEqual(undecomposed, [])

    def test_a_skipped_decomposition_turns_them_off_too(self):
        configs, _, undecomposed = fb.split_configs({fb.SKIP_DECOMPOSITIONS: ["aten.silu.default"]})
        self.assertTrue(configs["force_disable_caches"])
        self.assertEqual(undecomposed, [torch.ops.aten.silu.default])

    def test_without_the_harness_keys_the_configs_pass_as_they_are(self):
        self.assertEqual(fb.split_configs({"fallback_random": True}), ({"fallback_random": True}, [], []))

    def test_wrong_values_name_the_key(self):
        for configs, said in [({fb.ATEN_FALLBACKS: '"aten.relu.default"'}, "expected a JSON list"),
                              ({fb.ATEN_FALLBACKS: ["aten.no_such_op.default"]}, "is not an operator"),
                              ({"aoti_harness.fallbacks": []}, "unknown harness key"),
                              ({fb.SKIP_DECOMPOSITIONS: ["aten.relu.default"]}, "has no decomposition")]:
            with self.assertRaises(fb.ContractError) as e:
                fb.split_configs(configs)
            self.assertIn(said, str(e.exception))


class Fallbacks(unittest.TestCase):
    def test_inductor_tables_are_restored_after_the_compile(self):
        from torch._inductor import decomposition, lowering

        op = torch.ops.aten.silu.default
        before = (op in decomposition.decompositions, lowering.lowerings.get(op), op in lowering.fallbacks)
        with fb.AtenFallbacks([torch.ops.aten.silu]):
            self.assertNotIn(op, decomposition.decompositions)
            self.assertIn(op, lowering.fallbacks)
        self.assertEqual((op in decomposition.decompositions, lowering.lowerings.get(op), op in lowering.fallbacks),
                         before)


class Plants(unittest.TestCase):
    def test_a_plant_turns_inductor_caches_off_and_is_not_passed_to_inductor(self):
        configs, fallbacks, undecomposed = fb.split_configs({fb.PLANT_BUG: '{"op": "sin", "kind": "nan"}'})
        self.assertEqual(configs, {"force_disable_caches": True})
        self.assertEqual((fallbacks, undecomposed), ([], []))

    def test_each_kind_rewrites_the_ops_code_and_is_undone(self):
        from torch._inductor.codegen.cpp import CppOverrides, CppVecOverrides

        wanted = {"compile_error": "compile error!", "runtime_error": "std::exp(x); throw 1",
                  "signal": "std::exp(x); __builtin_trap()",
                  "out_of_bounds": "(std::exp(x)) + decltype(std::exp(x))(((volatile float*)nullptr)[1 << 20])",
                  "accuracy": "(std::exp(x)) + decltype(std::exp(x))(1)",
                  "drift": "(std::exp(x)) * decltype(std::exp(x))(1.001)", "nan": "(std::exp(x)) + decltype(std::exp(x))(NAN)"}
        self.assertEqual(sorted(wanted), sorted(fb.PLANT_KINDS))
        vec_before = vars(CppVecOverrides)["exp"]
        for kind, code in wanted.items():
            with fb.PlantedBug.from_configs({fb.PLANT_BUG: {"op": "exp", "kind": kind, "amount": 0.001}}):
                self.assertEqual(CppOverrides.exp("x"), code)
                # The vectorized op too, under its name: CppVecOverrides wraps its ops by name.
                self.assertEqual(vars(CppVecOverrides)["exp"].__func__.__name__, "exp")
                self.assertEqual(vars(CppVecOverrides)["exp"].__func__("x"), code.replace("std::exp(x)", "x.exp()"))
            self.assertEqual(CppOverrides.exp("x"), "std::exp(x)")
            self.assertIs(vars(CppVecOverrides)["exp"], vec_before)

    def test_an_inherited_op_is_planted_and_then_inherited_again(self):
        from torch._inductor.codegen.cpp import CppOverrides

        self.assertNotIn("identity", vars(CppOverrides))  # inductor's base class has it
        with fb.PlantedBug.from_configs({fb.PLANT_BUG: {"op": "identity", "kind": "accuracy"}}):
            self.assertEqual(CppOverrides.identity("a"), "(a) + decltype(a)(1)")
        self.assertEqual(CppOverrides.identity("a"), "a")
        self.assertNotIn("identity", vars(CppOverrides))

    def test_wrong_plants_name_the_key_and_what_was_expected(self):
        for spec, said in [('"sin"', "expected a JSON object"),
                           ({"op": "sin", "kind": "accuracy", "where": 1}, "expected a JSON object"),
                           ({"op": "sin", "kind": "wrong"}, "kind 'wrong' is not one of"),
                           ({"op": "no_such_op", "kind": "nan"}, "op 'no_such_op' is not an op of inductor's C++"),
                           ({"op": "_private", "kind": "nan"}, "is not an op"),
                           ({"op": "sin", "kind": "drift", "amount": -1}, "expected a number above 0")]:
            with self.assertRaises(fb.ContractError) as e:
                fb.split_configs({fb.PLANT_BUG: spec})
            self.assertIn(fb.PLANT_BUG, str(e.exception))
            self.assertIn(said, str(e.exception))

    def test_a_compiled_drift_reaches_the_vectorized_loop_and_its_scalar_tail(self):
        # 37 columns: a vectorized main loop and a scalar tail; every element must drift.
        class M(torch.nn.Module):
            def forward(self, x):
                return torch.sin(x) * 2

        x = torch.rand(4, 37) + 0.5  # sin(x) well away from 0
        ep = torch.export.export(M(), (x,))
        spec = {fb.PLANT_BUG: {"op": "sin", "kind": "drift", "amount": 0.01}}
        configs, _, _ = fb.split_configs(spec)
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            with fb.PlantedBug.from_configs(spec):
                path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tmp, "m.pt2"),
                                                                inductor_configs=configs)
            out = torch._inductor.aoti_load_package(path)(x)
        ratio = out / M()(x)
        torch.testing.assert_close(ratio, torch.full_like(ratio, 1.01), rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    unittest.main()
