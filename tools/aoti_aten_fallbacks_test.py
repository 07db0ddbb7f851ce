"""aoti_aten_fallbacks: the one implementation of the harness's own inductor_configs keys.

What a workaround.md says is what the verified compile did: split_configs turns the caches
off wherever an operator falls back or loses its decomposition (a warm inductor cache would
otherwise hand back the compile without them), AtenFallbacks puts inductor's tables back
after one compile, and a malformed key is a ContractError naming it. Run by
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


if __name__ == "__main__":
    unittest.main()
