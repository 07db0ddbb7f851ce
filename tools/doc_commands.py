#!/usr/bin/env python3
"""doc_commands: the README's and docs/'s commands still work.

For every ```bash block of the given Markdown files:
  - the block parses (bash -n);
  - every path of this repository it names exists, and every Bazel target it names is
    declared (in its package's BUILD file, else by `bazel query` with --run);
  - with --run, the cheap commands run from the repository root, `bazel` being the
    workspace's (tools/bazel_env.sh): ls, cat, grep, head, wc, bash -n, bazel query,
    bazel build, `bazel run` of //plugin:flags_help or of a binary with --help or a
    --print_... flag, and `bazel test` of targets already up to date
    (--check_tests_up_to_date). Anything else
    (the two long commands, a test that is not cached) is checked, not run, and counted
    as such.
Over the whole text of every file: each `--aoti_*` flag named is defined by the harness
(a DEFINE_*(aoti_...) in its sources), and each relative Markdown link exists.

Blocks marked otherwise (```python, ``` with no language, ```cpp) are a user's files or
commands in a user's repository: their flags and links are checked, not their commands.

Usage: python3 tools/doc_commands.py [--run] README.md docs/*.md
Exits 1 naming each problem: the file, the line, the command and what is wrong.
"""
import argparse
import glob
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP_DIRS = ("tools", "bench", "docs", "examples", "harness", "reducer", "plugin", "matchers", "testdata", "fuzz",
            ".ci", "third_party")
CHEAP_WORDS = {"ls", "cat", "grep", "head", "wc"}


def blocks(path):
    """(language, first line number, [(line number, text)]) of each fenced block."""
    out, lang, start, body = [], None, 0, []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            fence = re.match(r"^\s*```(\S*)", line)
            if fence and lang is None:
                lang, start, body = fence.group(1), n, []
            elif fence:
                out.append((lang, start, body))
                lang = None
            elif lang is not None:
                body.append((n, line.rstrip("\n")))
    return out


def commands(body):
    """Logical command lines of a block: continuations joined, comments and blanks dropped."""
    out, pending, first = [], "", 0
    for n, line in body:
        if not pending:
            first = n
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        text = (pending + line).strip()
        pending = ""
        if text and not text.startswith("#"):
            out.append((first, text))
    return out


def words(command):
    try:
        return shlex.split(command, comments=True)
    except ValueError:
        return command.split()


def defined_flags():
    flags = set()
    for pattern in ("harness/*/*.cc", "reducer/*.cc", "plugin/*.cc", "matchers/*.cc"):
        for source in glob.glob(os.path.join(ROOT, pattern)):
            with open(source, encoding="utf-8") as f:
                flags.update(re.findall(r"DEFINE_\w+\((aoti_\w+)", f.read()))
    return flags


def declared(label):
    """Whether //pkg:name is declared by a `name = "..."` in pkg's BUILD file."""
    label = re.sub(r"^@aoti_harness", "", label)
    m = re.match(r"^//([^:]*)(?::(.+))?$", label)
    if not m:
        return False
    package, name = m.group(1), m.group(2) or m.group(1).split("/")[-1]
    if name in ("all", "*") or package.endswith("..."):
        return os.path.isdir(os.path.join(ROOT, package.replace("...", "").rstrip("/")))
    for build in ("BUILD.bazel", "BUILD"):
        path = os.path.join(ROOT, package, build)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                return re.search(r'name = "%s"' % re.escape(name), f.read()) is not None or \
                    os.path.exists(os.path.join(ROOT, package, name))
    return False


def cheap(argv):
    """Why a command is cheap enough to run, or None."""
    if not argv:
        return None
    if argv[0] in CHEAP_WORDS or argv[:2] == ["bash", "-n"]:
        return "read-only"
    if argv[0] != "bazel" or len(argv) < 2:
        return None
    verb = argv[1]
    if verb in ("query", "build"):
        return verb
    if verb == "run" and ("//plugin:flags_help" in argv or any(a == "--help" or a.startswith("--print_") for a in argv)):
        return "help"
    if verb == "test":
        return "test, if up to date"
    return None


def run(command, why):
    # The workspace's Bazel, as the suite ran it: in suite/, whose workspace reads this one
    # as @aoti_harness (tools/bazel_env.sh's suite_cmd: its disk cache, its Python, the
    # compile ledger's path), the command's labels read there as @aoti_harness//...; here,
    # or with other flags, every action would have another key and the harness would build
    # again. A query reads BUILD files only and runs here.
    prelude = ('source tools/bazel_env.sh >/dev/null 2>&1; bazel() { local c="$1"; shift; case "$c" in '
               'query) command bazel query "$@" ;; '
               '*) local a=() x rest=0; for x in "$@"; do '
               'if ((rest == 0)) && [[ "$x" == //* ]]; then a+=("@aoti_harness$x"); else a+=("$x"); fi; '
               '[ "$x" != "--" ] || rest=1; done; suite_cmd "$c" "${a[@]}" ;; '
               'esac; }; ')
    if why == "test, if up to date":
        command = command.replace("bazel test", "bazel test --check_tests_up_to_date", 1)
    p = subprocess.run(["bash", "-c", prelude + command], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=600)
    return p.returncode, p.stdout[-1500:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", action="store_true", help="run the cheap commands too")
    ap.add_argument("--verbose", action="store_true", help="say of each command whether it ran")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    flags = defined_flags()
    problems, counts = [], {"run": 0, "checked": 0, "blocks": 0}
    to_query = []
    for path in args.files:
        rel = os.path.relpath(path, ROOT)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for n, line in enumerate(text.split("\n"), 1):
            for flag in re.findall(r"--(aoti_\w+)", line):
                if flag not in flags:
                    problems.append(f"{rel}:{n}: --{flag} is not a flag of the harness")
            for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", line):
                if "://" in link:
                    continue
                if not os.path.exists(os.path.join(os.path.dirname(path), link)):
                    problems.append(f"{rel}:{n}: the link {link} leads nowhere")
        for lang, start, body in blocks(path):
            if lang not in ("bash", "sh"):
                continue
            counts["blocks"] += 1
            script = "\n".join(t for _, t in body)
            p = subprocess.run(["bash", "-n"], input=script, text=True, stderr=subprocess.PIPE)
            if p.returncode:
                problems.append(f"{rel}:{start}: the block does not parse: {p.stderr.strip()}")
            for n, command in commands(body):
                argv = words(command)
                for w in argv:
                    w = w.rstrip(".,;:)")
                    if w.split("/")[0] in TOP_DIRS and "/" in w and not re.search(r"[*<>$]", w):
                        if not os.path.exists(os.path.join(ROOT, w)):
                            problems.append(f"{rel}:{n}: `{command}`: {w} does not exist")
                    if re.match(r"^(@aoti_harness)?//", w) and not declared(w):
                        to_query.append((rel, n, command, w))
                why = cheap(argv)
                if not args.run or not why:
                    counts["checked"] += 1
                    if args.verbose:
                        print(f"  checked  {rel}:{n}: {command}")
                    continue
                rc, out = run(command, why)
                if rc != 0 and why == "test, if up to date" and "is not up-to-date" in out:
                    counts["checked"] += 1  # declared and built by the suite, not run here
                    if args.verbose:
                        print(f"  checked  {rel}:{n}: {command} (not up to date: not run)")
                    continue
                counts["run"] += 1
                if args.verbose:
                    print(f"  ran      {rel}:{n}: {command} (exit {rc})")
                if rc != 0:
                    problems.append(f"{rel}:{n}: `{command}` exited {rc}:\n{out}")
    if to_query and args.run:
        labels = " + ".join(sorted({re.sub(r"^@aoti_harness", "", w) for _, _, _, w in to_query}))
        rc, out = run(f"bazel query '{labels}' >/dev/null", "query")
        if rc != 0:
            for rel, n, command, w in to_query:
                problems.append(f"{rel}:{n}: `{command}`: {w} is not a target of this workspace")
    elif to_query:
        for rel, n, command, w in to_query:
            problems.append(f"{rel}:{n}: `{command}`: {w} is not declared in its package's BUILD file")
    print(f"doc_commands: {len(args.files)} files, {counts['blocks']} bash blocks: {counts['run']} commands run, "
          f"{counts['checked']} checked without running; {len(problems)} problems")
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
