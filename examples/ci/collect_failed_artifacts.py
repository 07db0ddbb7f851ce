#!/usr/bin/env python3
"""collect_failed_artifacts.py: after `bazel test`, gather what the failed tests left for CI.

For each failed test (each failed shard) it writes DEST/<package>__<test>[__shard_N_of_M]/:

  test.xml        the test's JUnit report as the CI services read it (GitLab's test view,
                  Jenkins' junit and junit-attachments): valid against the JUnit schema, each
                  failing test case carrying its repro as `[[ATTACHMENT|path]]` lines
                  (report.html, repro.py, the repro's directory, diagnosis.md) and, first in
                  its failure text, what the reduction found
  test.bazel.xml  the report as Bazel wrote it (every attribute and property kept)
  outputs/        the test's undeclared outputs (the harness's cases and repros), unzipped:
                  from test.outputs/outputs.zip (Bazel before 8) or the test.outputs/
                  directory itself (Bazel 8, --nozip_undeclared_test_outputs)

and DEST/summary.md: per failing test case its failure class, culprit, stage, verified
workaround, nodes before and after and where its repro is: GitLab keeps it in the job's
artifact; on GitHub Actions it is also appended to $GITHUB_STEP_SUMMARY, the job's page.
Passing tests are left out.

  collect_failed_artifacts.py DEST [WORKSPACE] [--testlogs DIR] [--attachment-root PATH]
                              [--artifact-prefix PREFIX]

WORKSPACE (default .) is where `bazel info bazel-testlogs` runs; --testlogs names the
directory instead. bazel-testlogs is a symlink into Bazel's output base, which upload
actions do not follow, so the files are copied. Attachment paths are DEST as given (GitLab
resolves them against $CI_PROJECT_DIR, where the job runs) unless --attachment-root says
otherwise. --artifact-prefix (default aoti-repro-) names each test's artifact in the
summary, as the GitHub workflow uploads it. Needs Python 3.8's standard library only.
Exits 0 whether or not anything failed, 2 on a usage error.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile

# What the JUnit schema (Jenkins' junit-10.xsd, read by Jenkins and GitLab) allows.
SUITES_ATTRS = ("name", "time", "tests", "failures", "errors")
SUITE_ATTRS = ("name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp", "hostname",
               "id", "package", "file", "log", "url", "version")
CASE_ATTRS = ("name", "time", "classname", "group")
CASE_CHILDREN = ("skipped", "error", "failure", "rerunFailure", "rerunError", "flakyFailure", "flakyError",
                 "system-out", "system-err")


def usage_error(message):
    print(f"collect_failed_artifacts: {message}", file=sys.stderr)
    sys.exit(2)


def find_testlogs(workspace):
    try:
        out = subprocess.run(["bazel", "info", "bazel-testlogs"], cwd=workspace, capture_output=True, text=True,
                             check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        usage_error(f"{workspace} is not a Bazel workspace (bazel info bazel-testlogs failed)")
    return os.path.realpath(out)


def failed(xml_path):
    """A failed test's test.xml holds a <failure> or an <error> (Bazel writes an <error>
    for a test that crashed or timed out)."""
    try:
        root = ET.parse(xml_path).getroot()
    except ET.ParseError:
        return True  # a report cut short: the test did not end well
    return any(True for tag in ("failure", "error") for _ in root.iter(tag))


def junit_time(value):
    """A time as the schema's SUREFIRE_TIME takes it: at most three decimals."""
    try:
        return f"{float(value):.3f}"
    except (TypeError, ValueError):
        return None


def copy_outputs(test_dir, dest):
    """The test's undeclared outputs into dest/outputs, from either layout; returns it."""
    out = os.path.join(dest, "outputs")
    outputs = os.path.join(test_dir, "test.outputs")
    zip_path = os.path.join(outputs, "outputs.zip")
    if os.path.isfile(zip_path):
        with zipfile.ZipFile(zip_path) as z:
            root = os.path.realpath(out)
            for info in z.infolist():
                target = os.path.realpath(os.path.join(out, info.filename))
                if not (target == root or target.startswith(root + os.sep)):
                    print(f"  skipped {info.filename} in {zip_path}: it points outside the outputs", file=sys.stderr)
                    continue
                z.extract(info, out)
    if os.path.isdir(outputs):
        for dirpath, _, files in os.walk(outputs):
            for f in files:
                src = os.path.join(dirpath, f)
                if src == zip_path:
                    continue
                target = os.path.join(out, os.path.relpath(src, outputs))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy2(src, target)
    return out if os.path.isdir(out) else None


def case_properties(case):
    props = {}
    for p in case.iter("property"):
        props[p.get("name")] = p.get("value", "")
    return props


def in_outputs(value):
    """A property's path under the test's outputs; older harnesses wrote "outputs.zip:<path>"."""
    return value[len("outputs.zip:"):] if value.startswith("outputs.zip:") else value


def reductions(props, outputs):
    """The case's repros: (suffix, repro directory relative to the outputs) from aoti_repro,
    aoti_repro_2, ...; a property that says 'not reduced: ...' or 'the reduction failed'
    still has its directory when the harness wrote one."""
    found = []
    for name, value in props.items():
        if name == "aoti_repro" or (name.startswith("aoti_repro_") and name[len("aoti_repro_"):].isdigit()):
            suffix = name[len("aoti_repro"):]
            rel = in_outputs(value)
            if outputs and os.path.isdir(os.path.join(outputs, rel)):
                found.append((suffix, rel))
            elif props.get("aoti_case" + suffix):
                case_rel = in_outputs(props["aoti_case" + suffix])
                if outputs and os.path.isdir(os.path.join(outputs, case_rel, "repro")):
                    found.append((suffix, case_rel + "/repro"))
    return sorted(found)


def read_summary(repro_dir):
    try:
        with open(os.path.join(repro_dir, "summary.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def reduction_line(s):
    """One line of what the reduction found, from its summary.json."""
    if not s:
        return "not reduced (no summary.json)"
    if not s.get("reduced", False):
        return "not reduced: " + s.get("not_reproduced", "")
    culprit = s.get("culprit_text") or s.get("culprit_path") or s.get("culprit") or "none named"
    line = (f"{s.get('failure_class', '?')}, culprit {culprit}, reduced from {s.get('nodes_before')} to "
            f"{s.get('nodes_after')} nodes in {s.get('compiles')} compiles")
    stage = s.get("stage") or {}
    if stage.get("ran"):
        line += f"; stage {stage.get('stage')}"
        if stage.get("workaround_verified"):
            line += f"; verified workaround: {stage.get('workaround_what')}"
    return line


def normalized(root, attachments, headlines):
    """The report as the JUnit schema has it: attributes it does not know dropped (they stay
    in test.bazel.xml), a test case's properties and location written into its system-out,
    its attachments and the reduction's findings added."""
    suites = ET.Element("testsuites")
    source_suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    for key in SUITES_ATTRS:
        if root.tag == "testsuites" and root.get(key) is not None:
            suites.set(key, junit_time(root.get(key)) if key == "time" else root.get(key))
    for s in source_suites:
        suite = ET.SubElement(suites, "testsuite")
        for key in SUITE_ATTRS:
            if s.get(key) is not None:
                suite.set(key, junit_time(s.get(key)) if key == "time" else s.get(key))
        for key, default in (("name", "tests"), ("tests", "0"), ("failures", "0"), ("errors", "0")):
            if suite.get(key) is None:
                suite.set(key, default)
        for child in s:
            if child.tag == "properties":
                suite.append(child)
            elif child.tag in ("system-out", "system-err"):
                suite.append(child)
            elif child.tag == "testcase":
                suite.append(normalized_case(child, attachments.get(id(child), []), headlines.get(id(child), [])))
    return suites


def normalized_case(c, attachments, headlines):
    case = ET.Element("testcase")
    for key in CASE_ATTRS:
        if c.get(key) is not None:
            case.set(key, junit_time(c.get(key)) if key == "time" else c.get(key))
    if c.get("name") is None:
        case.set("name", "test")
    if c.get("status") == "notrun" or c.get("result") in ("skipped", "suppressed"):
        if c.find("skipped") is None:
            ET.SubElement(case, "skipped", {"message": c.get("result") or "not run"})
    out_lines = []
    for child in c:
        if child.tag in ("failure", "error") and headlines:
            lead = "\n".join(headlines)
            child.set("message", lead + "\n" + (child.get("message") or ""))
            child.text = lead + "\n\n" + (child.text or "")
        if child.tag in CASE_CHILDREN:
            if child.tag == "system-out":
                out_lines.append(child.text or "")
                continue
            case.append(child)
    props = case_properties(c)
    if c.get("file"):
        out_lines.append(f"at {c.get('file')}:{c.get('line', '?')}")
    out_lines += [f"{k}: {v}" for k, v in props.items()]
    out_lines += [f"[[ATTACHMENT|{a}]]" for a in attachments]
    if out_lines:
        ET.SubElement(case, "system-out").text = "\n".join(out_lines) + "\n"
    return case


def collect_one(xml_path, test_dir, name, dest, attachment_root, rows, artifact):
    target = os.path.join(dest, name)
    os.makedirs(target, exist_ok=True)
    shutil.copy2(xml_path, os.path.join(target, "test.bazel.xml"))
    outputs = copy_outputs(test_dir, target)
    try:
        root = ET.parse(xml_path).getroot()
    except ET.ParseError as e:
        # A report cut short (a test killed while GoogleTest wrote it): one test case that
        # says so, with every repro the outputs hold; the bytes as written stay in
        # test.bazel.xml.
        root = ET.Element("testsuites")
        suite = ET.SubElement(root, "testsuite", {"name": name, "tests": "1", "failures": "0", "errors": "1"})
        case = ET.SubElement(suite, "testcase", {"name": name})
        ET.SubElement(case, "error", {"message": f"Bazel's test.xml for {name} cannot be read ({e}); "
                                                 "it is kept as test.bazel.xml"})
    attachments, headlines = {}, {}
    cases = list(root.iter("testcase"))
    failing = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
    for c in failing:
        props = case_properties(c)
        found = reductions(props, outputs)
        # A test Bazel ended (a timeout, a crash) has no properties: its report holds one
        # test case, which gets every repro the outputs hold.
        if not found and not props and outputs and os.path.isdir(os.path.join(outputs, "aoti")):
            for test in sorted(os.listdir(os.path.join(outputs, "aoti"))):
                if os.path.isdir(os.path.join(outputs, "aoti", test, "repro")):
                    found.append(("", f"aoti/{test}/repro"))
        files, lines = [], []
        for _, rel in found:
            repro = os.path.join(outputs, rel)
            s = read_summary(repro)
            where = f"{attachment_root}/{name}/outputs/{rel}"
            lines.append(f"AOTI repro: {reduction_line(s)}; open {where}/report.html")
            for f in ("report.html", "repro.py", "report.md"):
                if os.path.isfile(os.path.join(repro, f)):
                    files.append(f"{where}/{f}")
            files.append(where)
            rows.append({"test": name, "case": f"{c.get('classname', '')}.{c.get('name', '')}".strip("."),
                         "summary": s, "file": f"{where}/report.html", "artifact": artifact})
        case_rel = in_outputs(props.get("aoti_case", ""))
        has_diagnosis = bool(case_rel and outputs and os.path.isfile(os.path.join(outputs, case_rel, "diagnosis.md")))
        if has_diagnosis:
            files.append(f"{attachment_root}/{name}/outputs/{case_rel}/diagnosis.md")
        if case_rel and not found:
            # No repro: the case itself, its diagnosis where the harness wrote one, and why
            # nothing was reduced as the harness said it (aoti_not_reduced).
            case_where = f"{attachment_root}/{name}/outputs/{case_rel}"
            rows.append({"test": name, "case": f"{c.get('classname', '')}.{c.get('name', '')}".strip("."),
                         "summary": {}, "file": case_where + ("/diagnosis.md" if has_diagnosis else ""),
                         "artifact": artifact, "failure_class": props.get("aoti_failure_class", ""),
                         "not_reduced": props.get("aoti_not_reduced", "run with DUMP_AOTI_MINIFIER=1")})
        attachments[id(c)] = files
        headlines[id(c)] = lines
    tree = ET.ElementTree(normalized(root, attachments, headlines))
    if hasattr(ET, "indent"):  # Python 3.9 and later
        ET.indent(tree)
    tree.write(os.path.join(target, "test.xml"), encoding="UTF-8", xml_declaration=True)
    return sorted(os.listdir(target))


def md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def summary_markdown(rows, failed_tests, dest):
    lines = [f"## AOTI: {len(failed_tests)} failed test(s)", ""]
    if not failed_tests:
        return "\n".join(lines + ["Every test passed."]) + "\n"
    lines += ["| test | failure | culprit | stage | verified workaround | nodes | repro |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        s = r["summary"]
        stage = s.get("stage") or {}
        if s.get("reduced"):
            culprit = s.get("culprit_text") or s.get("culprit_path") or s.get("culprit") or "(none named)"
            nodes = f"{s.get('nodes_before')} → {s.get('nodes_after')}"
        elif s:
            culprit, nodes = "not reduced: " + s.get("not_reproduced", "")[:120], ""
        else:
            culprit, nodes = "not reduced: " + r["not_reduced"], ""
        lines.append("| " + " | ".join(md_cell(x) for x in (
            f"{r['test']} `{r['case']}`",
            s.get("failure_class") or r.get("failure_class", ""),
            culprit,
            stage.get("stage", "") if stage.get("ran") else "",
            stage.get("workaround_what", "") if stage.get("workaround_verified") else "",
            nodes,
            f"artifact `{r['artifact']}`: `{r['file']}`")) + " |")
    without = sorted(set(failed_tests) - {r["test"] for r in rows})
    for t in without:
        lines.append(f"| {md_cell(t)} | (no AOTI case: not an AOTI check's failure) | | | | | `{dest}/{t}/test.xml` |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest")
    parser.add_argument("workspace", nargs="?", default=".")
    parser.add_argument("--testlogs", help="bazel-testlogs' directory (default: bazel info bazel-testlogs in WORKSPACE)")
    parser.add_argument("--attachment-root", help="how attachments name DEST (default: DEST as given)")
    parser.add_argument("--artifact-prefix", default="aoti-repro-", help="each test's artifact name before its name")
    args = parser.parse_args()
    if not os.path.isdir(args.workspace):
        usage_error(f"no directory {args.workspace}")
    testlogs = os.path.realpath(args.testlogs) if args.testlogs else find_testlogs(args.workspace)
    if not os.path.isdir(testlogs):
        usage_error(f"--testlogs {testlogs}: no such directory (expected bazel-testlogs)")
    dest = args.dest
    attachment_root = (args.attachment_root or dest).rstrip("/")
    os.makedirs(dest, exist_ok=True)
    xmls = []
    for dirpath, dirs, files in os.walk(testlogs):
        dirs.sort()
        if "test_attempts" in os.path.relpath(dirpath, testlogs).split(os.sep):
            continue  # earlier attempts of a flaky test
        if "test.xml" in files:
            xmls.append(os.path.join(dirpath, "test.xml"))
    rows, failed_tests = [], []
    for xml_path in sorted(xmls):
        if not failed(xml_path):
            continue
        test_dir = os.path.dirname(xml_path)
        name = os.path.relpath(test_dir, testlogs).replace(os.sep, "__")
        artifact = args.artifact_prefix + name
        got = collect_one(xml_path, test_dir, name, dest, attachment_root, rows, artifact)
        failed_tests.append(name)
        print(f"collected {name}: {' '.join(got)}")
    md = summary_markdown(rows, failed_tests, dest)
    with open(os.path.join(dest, "summary.md"), "w") as f:
        f.write(md)
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a") as f:
            f.write(md)
    print(f"collected the artifacts of {len(failed_tests)} failed test(s) into {dest}"
          f" (summary: {os.path.join(dest, 'summary.md')}{', and the job summary' if step_summary else ''})")


if __name__ == "__main__":
    main()
