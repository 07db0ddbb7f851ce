"""Tests of collect_failed_artifacts.py on bazel-testlogs laid out as Bazel leaves them.

Both layouts of a test's undeclared outputs: zipped into test.outputs/outputs.zip (Bazel
before 8) and unzipped in test.outputs/ (Bazel 8's default). The failing report is the
test.xml the example's failing demo wrote (testdata/failing_demo_test.xml, Bazel 4.2.3 and
GoogleTest 1.12), its outputs a repro as the harness writes one. The collected test.xml is
validated with xmllint against the JUnit schema Jenkins and GitLab read
(third_party/junit_xsd/junit-10.xsd).

  python3 collect_failed_artifacts_test.py [COLLECTOR XSD FIXTURE]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ARGS = sys.argv[1:4] if len(sys.argv) >= 4 else []
COLLECTOR = ARGS[0] if ARGS else os.path.join(HERE, "collect_failed_artifacts.py")
XSD = ARGS[1] if ARGS else os.path.join(HERE, "..", "..", "third_party", "junit_xsd", "junit-10.xsd")
FIXTURE = ARGS[2] if ARGS else os.path.join(HERE, "testdata", "failing_demo_test.xml")
CASE = "aoti/AotiModel.CompiledMatchesEager"

SUMMARY = {
    "reduced": True, "failure_class": "accuracy", "nodes_before": 9, "nodes_after": 1, "compiles": 2,
    "culprit": "relu", "culprit_path": "relu", "culprit_text": "relu (aten.relu.default)",
    "stage": {"ran": True, "stage": "lowering or codegen (the scalar code too)", "workaround_verified": True,
              "workaround_what": "aten.relu.default called as an ATen kernel"},
}

PASSING = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="0" disabled="0" errors="0" time="1.5" name="AllTests">
  <testsuite name="AotiModel" tests="1" failures="0" disabled="0" skipped="0" errors="0" time="1.5">
    <testcase name="CompiledMatchesEager" status="run" result="completed" time="1.5" classname="AotiModel"/>
  </testsuite>
</testsuites>
"""

# A random model's check: a verdict nothing reduces, said by the harness (aoti_not_reduced).
RANDOM = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="1" disabled="0" errors="0" time="2.0" name="AllTests">
  <testsuite name="AotiModel" tests="1" failures="1" disabled="0" skipped="0" errors="0" time="2.0">
    <testcase name="CompiledMatchesEager" status="run" result="completed" time="2.0" classname="AotiModel">
      <failure message="AOTI check failed (nondeterministic): the model is random"><![CDATA[AOTI check failed]]></failure>
      <properties>
        <property name="aoti_failure_class" value="nondeterministic"/>
        <property name="aoti_not_reduced" value="none to reduce (nondeterministic is not the compiler's failure)"/>
        <property name="aoti_case" value="aoti/AotiModel.CompiledMatchesEager"/>
      </properties>
    </testcase>
  </testsuite>
</testsuites>
"""

# What Bazel writes for a test it killed at its timeout: no GoogleTest report, no properties.
TIMED_OUT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="hang_test" tests="1" failures="0" errors="1">
    <testcase name="hang_test" status="run" duration="300" time="300"><error message="Timed out"></error></testcase>
    <system-out>Generated test.log</system-out>
  </testsuite>
</testsuites>
"""


def read(path):
    with open(path) as f:
        return f.read()


def write_case(root, repro=True):
    """The harness's case and (unless `repro` is False) its repro under `root` (the test's
    undeclared outputs)."""
    os.makedirs(os.path.join(root, CASE))
    if repro:
        repro_dir = os.path.join(root, CASE, "repro")
        os.makedirs(os.path.join(repro_dir, "checkpoints"))
        for name, text in (("report.html", "<html>report</html>"), ("repro.py", "print('repro')\n"),
                           ("report.md", "# repro\n"), ("summary.json", json.dumps(SUMMARY))):
            with open(os.path.join(repro_dir, name), "w") as f:
                f.write(text)
    with open(os.path.join(root, CASE, "diagnosis.md"), "w") as f:
        f.write("# diagnosis\n")


def lay_out(testlogs, test, layout, xml_text=None, xml_file=FIXTURE, repro=True):
    d = os.path.join(testlogs, test)
    os.makedirs(os.path.join(d, "test.outputs"))
    if xml_text is None:
        shutil.copy(xml_file, os.path.join(d, "test.xml"))
    else:
        with open(os.path.join(d, "test.xml"), "w") as f:
            f.write(xml_text)
    if layout == "unzipped":
        write_case(os.path.join(d, "test.outputs"), repro)
    elif layout == "zipped":
        staging = tempfile.mkdtemp()
        write_case(staging, repro)
        with zipfile.ZipFile(os.path.join(d, "test.outputs", "outputs.zip"), "w") as z:
            for dirpath, _, files in os.walk(staging):
                for f in files:
                    p = os.path.join(dirpath, f)
                    z.write(p, os.path.relpath(p, staging))
            z.writestr("../escaped.txt", "a zip entry that points outside")
        shutil.rmtree(staging)
    return d


class Collector(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.work)
        self.testlogs = os.path.join(self.work, "testlogs")
        os.makedirs(self.testlogs)

    def collect(self, *extra, env=None):
        r = subprocess.run([sys.executable, COLLECTOR, "aoti_repros", "--testlogs", self.testlogs, *extra],
                           cwd=self.work, capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        return r.stdout

    def validate(self, xml_path):
        r = subprocess.run(["xmllint", "--noout", "--schema", XSD, xml_path], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, f"{xml_path} is not valid JUnit: {r.stderr}")

    def check_collected(self, name):
        d = os.path.join(self.work, "aoti_repros", name)
        self.validate(os.path.join(d, "test.xml"))
        self.assertTrue(os.path.isfile(os.path.join(d, "test.bazel.xml")))
        case = next(ET.parse(os.path.join(d, "test.xml")).getroot().iter("testcase"))
        out = case.find("system-out").text
        attachments = [line[len("[[ATTACHMENT|"):-2] for line in out.splitlines() if line.startswith("[[ATTACHMENT|")]
        expected = [f"aoti_repros/{name}/outputs/{CASE}/repro/{f}" for f in ("report.html", "repro.py", "report.md")]
        expected += [f"aoti_repros/{name}/outputs/{CASE}/repro", f"aoti_repros/{name}/outputs/{CASE}/diagnosis.md"]
        self.assertEqual(attachments, expected)
        for a in attachments:  # each resolves inside the uploaded directory, from where the job runs
            self.assertTrue(os.path.exists(os.path.join(self.work, a)), a)
        failure = case.find("failure")
        first = failure.get("message").splitlines()[0]
        self.assertEqual(first, "AOTI repro: accuracy, culprit relu (aten.relu.default), reduced from 9 to 1 nodes in 2 "
                                "compiles; stage lowering or codegen (the scalar code too); verified workaround: "
                                f"aten.relu.default called as an ATen kernel; open aoti_repros/{name}/outputs/{CASE}/repro/report.html")
        self.assertIn("AOTI check failed (accuracy)", failure.text, "the test's own message is kept below")
        self.assertIn("aoti_compiles: 2", out, "properties are kept in the case's output")
        return d

    def test_bazels_own_report_is_not_valid_junit_and_the_collected_one_is(self):
        # The control: GoogleTest's attributes and per-case properties are outside the schema.
        r = subprocess.run(["xmllint", "--noout", "--schema", XSD, FIXTURE], capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0, "the fixture validates as it is; the test would prove nothing")
        lay_out(self.testlogs, "zipped_test", "zipped")
        self.collect()
        self.validate(os.path.join(self.work, "aoti_repros", "zipped_test", "test.xml"))

    def test_both_layouts_collect_the_same(self):
        lay_out(self.testlogs, "zipped_test", "zipped")
        lay_out(self.testlogs, "unzipped_test", "unzipped")
        lay_out(self.testlogs, "passing_test", "unzipped", xml_text=PASSING)
        out = self.collect()
        self.assertIn("collected the artifacts of 2 failed test(s)", out)
        self.assertEqual(sorted(os.listdir(os.path.join(self.work, "aoti_repros"))),
                         ["summary.md", "unzipped_test", "zipped_test"])
        for name in ("zipped_test", "unzipped_test"):
            self.check_collected(name)
        self.assertFalse(os.path.exists(os.path.join(self.work, "aoti_repros", "escaped.txt")))
        self.assertFalse(os.path.exists(os.path.join(self.work, "escaped.txt")))

    def test_the_summary_goes_to_the_artifact_and_the_job_page(self):
        lay_out(self.testlogs, "models/mlp_test", "zipped")
        step_summary = os.path.join(self.work, "step_summary.md")
        with open(step_summary, "w") as f:
            f.write("earlier steps\n")
        self.collect(env=dict(os.environ, GITHUB_STEP_SUMMARY=step_summary))
        md = read(os.path.join(self.work, "aoti_repros", "summary.md"))
        self.assertIn("## AOTI: 1 failed test(s)", md)
        row = [line for line in md.splitlines() if line.startswith("| models__mlp_test")]
        self.assertEqual(row, ["| models__mlp_test `AotiModel.CompiledMatchesEager` | accuracy | relu (aten.relu.default) "
                               "| lowering or codegen (the scalar code too) | aten.relu.default called as an ATen kernel "
                               "| 9 → 1 | artifact `aoti-repro-models__mlp_test`: "
                               f"`aoti_repros/models__mlp_test/outputs/{CASE}/repro/report.html` |"])
        self.assertEqual(read(step_summary), "earlier steps\n" + md)

    def test_a_test_bazel_ended_gets_every_repro_and_flaky_attempts_are_left_out(self):
        lay_out(self.testlogs, "hang_test", "zipped", xml_text=TIMED_OUT)
        lay_out(self.testlogs, "flaky_test/test_attempts/attempt_1", "zipped")
        self.collect("--attachment-root", "/builds/team/models/aoti_repros")
        d = os.path.join(self.work, "aoti_repros")
        self.assertEqual(sorted(os.listdir(d)), ["hang_test", "summary.md"])
        self.validate(os.path.join(d, "hang_test", "test.xml"))
        case = next(ET.parse(os.path.join(d, "hang_test", "test.xml")).getroot().iter("testcase"))
        self.assertIn(f"[[ATTACHMENT|/builds/team/models/aoti_repros/hang_test/outputs/{CASE}/repro/report.html]]",
                      case.find("system-out").text)
        self.assertTrue(case.find("error").get("message").startswith("AOTI repro: accuracy, culprit relu"))

    def test_a_report_cut_short_is_collected_not_crashed_on(self):
        lay_out(self.testlogs, "killed_test", "zipped", xml_text=PASSING[:200])
        self.collect()
        d = os.path.join(self.work, "aoti_repros", "killed_test")
        self.validate(os.path.join(d, "test.xml"))
        self.assertEqual(read(os.path.join(d, "test.bazel.xml")), PASSING[:200])
        case = next(ET.parse(os.path.join(d, "test.xml")).getroot().iter("testcase"))
        self.assertIn("cannot be read", case.find("error").get("message"))
        self.assertIn(f"[[ATTACHMENT|aoti_repros/killed_test/outputs/{CASE}/repro/report.html]]",
                      case.find("system-out").text)

    def test_a_verdict_nothing_reduces_says_why_and_links_its_diagnosis(self):
        lay_out(self.testlogs, "noise_test", "zipped", xml_text=RANDOM, repro=False)
        self.collect()
        d = os.path.join(self.work, "aoti_repros")
        self.validate(os.path.join(d, "noise_test", "test.xml"))
        row = [line for line in read(os.path.join(d, "summary.md")).splitlines() if line.startswith("| noise_test")]
        self.assertEqual(row, ["| noise_test `AotiModel.CompiledMatchesEager` | nondeterministic | not reduced: none to "
                               "reduce (nondeterministic is not the compiler's failure) |  |  |  | artifact "
                               f"`aoti-repro-noise_test`: `aoti_repros/noise_test/outputs/{CASE}/diagnosis.md` |"])
        self.assertTrue(os.path.isfile(os.path.join(d, "noise_test", "outputs", CASE, "diagnosis.md")))

    def test_nothing_failed(self):
        lay_out(self.testlogs, "passing_test", "unzipped", xml_text=PASSING)
        self.assertIn("collected the artifacts of 0 failed test(s)", self.collect())
        self.assertIn("Every test passed.", read(os.path.join(self.work, "aoti_repros", "summary.md")))

    def collected_text(self, name):
        """Every collected file of the test `name`, as text."""
        texts = {}
        for dirpath, _, files in os.walk(os.path.join(self.work, "aoti_repros", name)):
            for f in files:
                with open(os.path.join(dirpath, f), errors="replace") as fh:
                    texts[os.path.relpath(os.path.join(dirpath, f), self.work)] = fh.read()
        return texts

    def test_a_link_in_the_outputs_is_left_out_never_followed(self):
        secret_dir = os.path.join(self.work, "ci_home")
        os.makedirs(secret_dir)
        with open(os.path.join(secret_dir, "token"), "w") as f:
            f.write("the CI job's upload token")
        d = lay_out(self.testlogs, "linked_test", "unzipped")
        os.symlink(os.path.join(secret_dir, "token"), os.path.join(d, "test.outputs", CASE, "repro", "notes.txt"))
        os.symlink(secret_dir, os.path.join(d, "test.outputs", "home"))
        r = subprocess.run([sys.executable, COLLECTOR, "aoti_repros", "--testlogs", self.testlogs],
                           cwd=self.work, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        texts = self.collected_text("linked_test")
        self.assertFalse([p for p, t in texts.items() if "upload token" in t], "a link's target was collected")
        self.check_collected("linked_test")  # everything else is there
        left_out = texts["aoti_repros/linked_test/outputs_left_out.txt"]
        self.assertIn(f"{CASE}/repro/notes.txt: a link; links are not followed", left_out)
        self.assertIn("home: a link; links are not followed", left_out)
        self.assertIn(f"left out {CASE}/repro/notes.txt: a link", r.stderr)

    def test_a_link_entry_in_the_zip_is_left_out(self):
        d = lay_out(self.testlogs, "zip_link_test", "zipped")
        with zipfile.ZipFile(os.path.join(d, "test.outputs", "outputs.zip"), "a") as z:
            link = zipfile.ZipInfo(f"{CASE}/repro/notes.txt")
            link.external_attr = (0o120777 << 16)
            z.writestr(link, "/etc/passwd")
        self.collect()
        self.assertFalse(os.path.lexists(os.path.join(self.work, "aoti_repros", "zip_link_test", "outputs", CASE,
                                                      "repro", "notes.txt")))
        self.assertIn(f"{CASE}/repro/notes.txt (in outputs.zip): a link",
                      read(os.path.join(self.work, "aoti_repros", "zip_link_test", "outputs_left_out.txt")))

    def test_a_zip_that_expands_past_the_cap_stops_there(self):
        d = lay_out(self.testlogs, "big_test", "zipped")
        with zipfile.ZipFile(os.path.join(d, "test.outputs", "outputs.zip"), "a", zipfile.ZIP_DEFLATED) as z:
            z.writestr(f"{CASE}/checkpoints/big_a.bin", b"\0" * (2 << 20))  # 2 MB, a few kB zipped
            z.writestr(f"{CASE}/checkpoints/big_b.bin", b"\0" * (3 << 20))
            z.writestr(f"{CASE}/checkpoints/small.bin", b"1")
        self.assertLess(os.path.getsize(os.path.join(d, "test.outputs", "outputs.zip")), 1 << 20)
        r = subprocess.run([sys.executable, COLLECTOR, "aoti_repros", "--testlogs", self.testlogs,
                            "--max-mb-per-test", "1"], cwd=self.work, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = os.path.join(self.work, "aoti_repros", "big_test", "outputs", CASE)
        self.assertFalse(os.path.exists(os.path.join(out, "checkpoints", "big_a.bin")), "no partial file is left")
        self.assertFalse(os.path.exists(os.path.join(out, "checkpoints", "big_b.bin")))
        self.assertTrue(os.path.exists(os.path.join(out, "checkpoints", "small.bin")), "smallest first")
        self.check_collected("big_test")  # the repro is small, and kept
        self.assertIn("big_a.bin (in outputs.zip): past the cap of 1 MB per test (--max-mb-per-test)", r.stderr)
        self.assertIn("left out 1 more file(s) past the cap", r.stderr)
        left_out = read(os.path.join(self.work, "aoti_repros", "big_test", "outputs_left_out.txt"))
        self.assertIn("big_b.bin (in outputs.zip): past the cap", left_out)

    def test_an_unzipped_file_past_the_cap_is_left_out(self):
        d = lay_out(self.testlogs, "big_dir_test", "unzipped")
        with open(os.path.join(d, "test.outputs", "zz_huge.bin"), "wb") as f:
            f.write(b"\0" * (2 << 20))
        r = subprocess.run([sys.executable, COLLECTOR, "aoti_repros", "--testlogs", self.testlogs,
                            "--max-mb-per-test", "1"], cwd=self.work, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.work, "aoti_repros", "big_dir_test", "outputs", "zz_huge.bin")))
        self.check_collected("big_dir_test")
        self.assertIn("zz_huge.bin: past the cap of 1 MB", r.stderr)

    def test_a_cap_that_is_not_a_size_is_a_usage_error(self):
        r = subprocess.run([sys.executable, COLLECTOR, "out", "--testlogs", self.testlogs, "--max-mb-per-test", "0"],
                           cwd=self.work, capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--max-mb-per-test 0: expected a size in MB above 0", r.stderr)

    def test_a_wrong_testlogs_is_named(self):
        r = subprocess.run([sys.executable, COLLECTOR, "out", "--testlogs", os.path.join(self.work, "nowhere")],
                           cwd=self.work, capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("nowhere: no such directory", r.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
