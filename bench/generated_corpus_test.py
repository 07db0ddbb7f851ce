"""generated_corpus.py: the draws are the seed's alone, every construct, pattern, place, kind and
plantable op is drawn, the planted op is in each program once, and the summary reads what
the tests left (a planted test reduced to its op, another not, a false alarm). Run by
//bench:generated_corpus_test; no torch needed."""
import json
import os
import sys
import tempfile
import unittest
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generated_corpus as gc  # noqa: E402


class Draws(unittest.TestCase):
    def test_a_seed_gives_the_same_program(self):
        self.assertEqual(gc.program_source(gc.draw(17)), gc.program_source(gc.draw(17)))
        self.assertNotEqual(gc.program_source(gc.draw(17)), gc.program_source(gc.draw(18)))

    def test_every_choice_is_drawn_and_the_planted_op_is_there_once(self):
        draws = [gc.draw(seed) for seed in range(300)]
        for key, values in [("construct", gc.CONSTRUCTS), ("pattern", gc.PATTERNS), ("place", gc.PLACES),
                            ("kind", gc.KINDS), ("op", list(gc.PLANTABLE)), ("names", [True, False])]:
            self.assertEqual(sorted({d[key] for d in draws}, key=str), sorted(values, key=str), key)
        for d in draws:
            source = gc.program_source(d)
            compile(source, f"g{d['seed']}.py", "exec")  # Python, whatever was drawn
            self.assertEqual(source.count(f"torch.{d['op']}("), 1, d)
            for other in gc.PLANTABLE:
                if other != d["op"]:
                    self.assertNotIn(f"torch.{other}(", source, d)

    def test_the_plant_travels_in_the_packages_configs(self):
        d = dict(gc.draw(0), op="sin", kind="runtime_error", names=False)
        configs = gc.plant_configs(d)
        self.assertEqual(json.loads(configs["aoti_harness.plant_bug_TESTING_ONLY"]), {"op": "sin", "kind": "runtime_error"})
        self.assertEqual(configs["cpp.threads"], "1")
        self.assertEqual(configs["cpp.descriptive_names"], "false")
        self.assertEqual(set(gc.plant_configs(dict(d, kind="nan", names=True))), {"aoti_harness.plant_bug_TESTING_ONLY"})


class Summary(unittest.TestCase):
    def test_the_figures_come_from_the_tests_outputs(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo, logs = os.path.join(tmp, "repo"), os.path.join(tmp, "logs")

            class Args:
                out, harness, seeds = repo, "/harness", "5:8"

            gc.generate(Args)
            build = open(os.path.join(repo, "BUILD.bazel")).read()
            for seed in (5, 6, 7):
                self.assertIn(f'aoti_package(name = "g{seed}_planted"', build)
            programs = {p["seed"]: p for p in json.load(open(os.path.join(repo, "programs.json")))}

            def test_dir(name, failed, summary=None, log=""):
                os.makedirs(os.path.join(logs, name, "test.outputs"))
                with open(os.path.join(logs, name, "test.log"), "w") as f:
                    f.write(log)
                with open(os.path.join(logs, name, "test.xml"), "w") as f:
                    f.write('<testcase name="x">' + ('<failure message="m"/>' if failed else "") + "</testcase>")
                if summary is not None:
                    with zipfile.ZipFile(os.path.join(logs, name, "test.outputs", "outputs.zip"), "w") as z:
                        z.writestr("aoti/AotiModel.CompiledMatchesEager/repro/summary.json", json.dumps(summary))

            op5 = programs[5]["op"]
            test_dir("g5_test", False)
            test_dir("g5_planted_test", True, {"reduced": True, "compiles": 2, "seconds": 30.0, "nodes_before": 9,
                                               "nodes_after": 1, "ops": [f"aten.{op5}.default"],
                                               "failure_class": "accuracy"})
            test_dir("g6_test", True, log="AOTI check failed (accuracy): //:g6 model 'model'")  # a false alarm
            # AOTI's own failure of the healthy program: its planted twin is left out.
            test_dir("g7_test", True, log="AOTI check failed (compile error): //:g7 model 'model'")
            test_dir("g6_planted_test", True, {"reduced": True, "compiles": 7, "seconds": 90.0, "nodes_before": 9,
                                               "nodes_after": 3, "ops": ["aten.mul.Tensor"], "failure_class": "accuracy"})
            results = os.path.join(tmp, "results.json")

            class SArgs:
                testlogs, merge, table = logs, True, os.path.join(tmp, "t.md")

            SArgs.repo, SArgs.results = repo, results
            gc.summarize(SArgs)
            r = json.load(open(results))
            self.assertEqual((r["programs"], r["planted"], r["planted_failed"], r["reduced_to_op"], r["false_alarms"]),
                             (3, 2, 2, 1, 1))
            self.assertEqual((r["compiles_max"], r["healthy_run"], r["healthy_aoti_fails"]), (7, 3, 1))
            self.assertEqual([c["healthy"] for c in r["cases"]], ["pass", "false alarm", "AOTI fails (compile error)"])
            self.assertEqual([c["planted"] for c in r["cases"]], ["failed", "failed", "not run"])
            # Another seed range merges into the same results.
            r["cases"][0]["name"], r["cases"][0]["seed"] = "g100", 100
            json.dump(r, open(results, "w"))
            gc.summarize(SArgs)
            with open(results) as f:
                self.assertEqual(json.load(f)["programs"], 4)


if __name__ == "__main__":
    unittest.main()
