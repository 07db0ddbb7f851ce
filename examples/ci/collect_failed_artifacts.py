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
                  directory itself (Bazel 8, --nozip_undeclared_test_outputs); regular
                  files only, at most --max-mb-per-test MB (default 256) per test
  outputs_left_out.txt  when anything was left out of outputs/, what and why: a link
                  (never followed: a test could point one at any file of the CI machine),
                  a file that is not regular, a zip entry pointing outside, what passed the cap

and DEST/summary.md: per failing test case its failure class, culprit, stage, verified
workaround, nodes before and after and where its repro is: GitLab keeps it in the job's
artifact; on GitHub Actions it is also appended to $GITHUB_STEP_SUMMARY, the job's page.
Passing tests are left out.

  collect_failed_artifacts.py DEST [WORKSPACE] [--testlogs DIR] [--attachment-root PATH]
                              [--artifact-prefix PREFIX] [--max-mb-per-test MB]

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
import stat
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


DEFAULT_MAX_MB_PER_TEST = 256
CHUNK = 1 << 20


class Budget:
    """The bytes one test's outputs may take once collected (--max-mb-per-test), and what
    was left out: links (never followed: a test's outputs may point at any file of the
    machine, and the CI job that uploads them holds credentials the test never had), files
    that are not regular, and what did not fit. Each left-out file is said in a line on
    stderr and in DEST/<test>/outputs_left_out.txt, which goes up with the artifact."""

    def __init__(self, max_bytes):
        self.left = max_bytes
        self.max_bytes = max_bytes
        self.full = False
        self.left_out = []
        self.past_cap = 0

    def leave_out(self, what, why):
        self.left_out.append(f"{what}: {why}")
        if self.full and why.startswith("past"):
            self.past_cap += 1  # one line for them all, at the end (said)
        else:
            print(f"  left out {what}: {why}", file=sys.stderr)

    def said(self):
        if self.past_cap:
            print(f"  left out {self.past_cap} more file(s) past {self.cap_text()} (listed in outputs_left_out.txt)",
                  file=sys.stderr)

    def cap_text(self):
        return f"the cap of {self.max_bytes / (1 << 20):g} MB per test (--max-mb-per-test)"


def copy_bounded(read_chunk, target, budget, what):
    """Writes what read_chunk() returns to target until it ends or the budget is spent (the
    partial file is then removed); returns whether the whole file was written."""
    os.makedirs(os.path.dirname(target), exist_ok=True)
    written = 0
    with open(target, "wb") as f:
        while True:
            chunk = read_chunk()
            if not chunk:
                break
            if written + len(chunk) > budget.left:
                f.close()
                os.remove(target)
                budget.leave_out(what, f"past {budget.cap_text()}; it and every later file are left out")
                budget.full = True
                return False
            f.write(chunk)
            written += len(chunk)
    budget.left -= written
    return True


def copy_outputs(test_dir, dest, max_bytes=DEFAULT_MAX_MB_PER_TEST << 20):
    """The test's undeclared outputs into dest/outputs, from either layout, bounded by
    max_bytes, copying files only (a link, in the directory or as a zip entry, is left out
    and said); returns the outputs' directory (or None) and the Budget."""
    out = os.path.join(dest, "outputs")
    budget = Budget(max_bytes)
    outputs = os.path.join(test_dir, "test.outputs")
    zip_path = os.path.join(outputs, "outputs.zip")
    if os.path.isfile(zip_path) and not os.path.islink(zip_path):
        with zipfile.ZipFile(zip_path) as z:
            root = os.path.realpath(out)
            # Smallest first: a cap leaves out the largest files (a checkpoint's values), not
            # the repro's few kB. The sizes entries declare only order them; the bytes are
            # counted as they are inflated.
            for info in sorted(z.infolist(), key=lambda i: (i.file_size, i.filename)):
                what = f"{info.filename} (in outputs.zip)"
                target = os.path.realpath(os.path.join(out, info.filename))
                if not (target == root or target.startswith(root + os.sep)):
                    budget.leave_out(what, "it points outside the outputs")
                    continue
                mode = (info.external_attr >> 16) & 0o170000
                if mode == 0o120000:
                    budget.leave_out(what, "a link; links are not followed")
                    continue
                if info.is_dir():
                    os.makedirs(target, exist_ok=True)
                    continue
                if budget.full:
                    budget.leave_out(what, f"past {budget.cap_text()}")
                    continue
                with z.open(info) as src:
                    copy_bounded(lambda: src.read(CHUNK), target, budget, what)
    if os.path.isdir(outputs) and not os.path.islink(outputs):
        regular = []
        for dirpath, dirs, files in os.walk(outputs):
            dirs.sort()
            for d in list(dirs):
                if os.path.islink(os.path.join(dirpath, d)):
                    dirs.remove(d)
                    budget.leave_out(os.path.relpath(os.path.join(dirpath, d), outputs), "a link; links are not followed")
            for f in sorted(files):
                src = os.path.join(dirpath, f)
                if src == zip_path:
                    continue
                rel = os.path.relpath(src, outputs)
                st = os.lstat(src)
                if stat.S_ISLNK(st.st_mode):
                    budget.leave_out(rel, "a link; links are not followed")
                elif not stat.S_ISREG(st.st_mode):
                    budget.leave_out(rel, "not a regular file")
                else:
                    regular.append((st.st_size, rel, src))
        for _, rel, src in sorted(regular):  # smallest first, as from the zip
            if budget.full:
                budget.leave_out(rel, f"past {budget.cap_text()}")
                continue
            # O_NOFOLLOW: a file swapped for a link after the check is not followed either.
            try:
                fd = os.open(src, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            except OSError as e:
                budget.leave_out(rel, f"cannot be read ({e.strerror})")
                continue
            with os.fdopen(fd, "rb") as fsrc:
                if copy_bounded(lambda: fsrc.read(CHUNK), os.path.join(out, rel), budget, rel):
                    shutil.copystat(src, os.path.join(out, rel), follow_symlinks=False)
    budget.said()
    if budget.left_out:
        with open(os.path.join(dest, "outputs_left_out.txt"), "w") as f:
            f.write("Left out of outputs/ by collect_failed_artifacts.py:\n")
            f.write("".join(f"  {line}\n" for line in budget.left_out))
    return (out if os.path.isdir(out) else None), budget


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


def collect_one(xml_path, test_dir, name, dest, attachment_root, rows, artifact, max_bytes):
    target = os.path.join(dest, name)
    os.makedirs(target, exist_ok=True)
    shutil.copy2(xml_path, os.path.join(target, "test.bazel.xml"))
    outputs, _ = copy_outputs(test_dir, target, max_bytes)
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
    parser.add_argument("--max-mb-per-test", type=float, default=DEFAULT_MAX_MB_PER_TEST,
                        help=f"the most one test's collected outputs may take, in MB (default {DEFAULT_MAX_MB_PER_TEST})")
    args = parser.parse_args()
    if not args.max_mb_per_test > 0:
        usage_error(f"--max-mb-per-test {args.max_mb_per_test:g}: expected a size in MB above 0")
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
        got = collect_one(xml_path, test_dir, name, dest, attachment_root, rows, artifact,
                          int(args.max_mb_per_test * (1 << 20)))
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
