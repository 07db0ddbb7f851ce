"""bench.py: aoti_reduce against PyTorch's own AOTI minifier (torch._dynamo.repro.aoti,
the minify command) on the same failing programs, one after the other on this machine;
writes a markdown report. Called by bench/reducer_vs_upstream.sh, which builds what it needs:

  python bench/bench.py --bin BAZEL_BIN --out RESULTS.md [--subset] [--work DIR] [PROGRAM ...]

For each program, in turn:
  1. package it (tools/package_model.py --export-only: the program and its sample inputs);
  2. reduce it with aoti_reduce (one compile server, an empty disk cache, a fresh inductor
     cache in the server, no precompiled headers), then once more with the same disk
     cache (the warm re-run);
  3. minify it with upstream's minifier (bench/upstream_minifier.py, a fresh
     TORCHINDUCTOR_CACHE_DIR, and a fresh TMPDIR: inductor keeps its precompiled headers
     in <tempdir>/torchinductor_<user>, whatever the cache directory);
  4. run each side's repro.py on its own and see whether it still fails.
Ours and upstream alternate which goes first, program by program. Every run is cold: no
compile is reused from an earlier run, except in the warm re-run, whose point that is.
With --warm-machine, both sides start with inductor's precompiled headers already built
(as on a machine that has compiled before), and everything else stays cold.
"""
import argparse
import datetime
import getpass
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
R = "cpp.inject_relu_bug_TESTING_ONLY"
L = "cpp.inject_log1p_bug_TESTING_ONLY"


def program(name, model, configs, mode, culprit, kwargs=None, crash=False, note=""):
    return dict(name=name, model=model, configs=configs, mode=mode, culprit=culprit, kwargs=kwargs or {},
                crash=crash, note=note)


# mode: upstream's --accuracy ("none" for compile errors, crashes and runtime errors).
PROGRAMS = [
    program("relu_cos_compile_error", "testdata/reduce/relu_cos.py", {R: "compile_error"}, "none", "relu",
            note="upstream's own smoke case"),
    program("log1p_relu_where", "testdata/reduce/log1p_relu_where.py", {R: "accuracy", L: "accuracy"}, "accuracy",
            "relu", note="upstream's own case, two bugs"),
    program("convbn_relu_accuracy", "testdata/convbn.py", {R: "accuracy"}, "accuracy", "relu", note="conv net"),
    program("mlp_runtime_error", "testdata/mlp.py", {R: "runtime_error"}, "none", "relu", note="MLP"),
    program("dynamic_block_compile_error", "testdata/reduce/dynamic_block.py", {R: "compile_error"}, "none", "relu",
            note="dynamic batch"),
    program("crash_block", "testdata/reduce/crash_block.py", {}, "none", "null_deref", crash=True,
            note="segfaulting custom op"),
    program("block_compile_error", "testdata/reduce/block.py", {R: "compile_error"}, "none", "relu",
            note="transformer block"),
    program("block_runtime_error", "testdata/reduce/block.py", {R: "runtime_error"}, "none", "relu",
            note="transformer block, SIGABRT"),
    program("block_log1p_accuracy", "testdata/reduce/block.py", {L: "accuracy"}, "accuracy", "log1p",
            note="transformer block"),
    program("bert_compile_error", "testdata/real/bert.py", {R: "compile_error"}, "none", "relu", {"act": "relu"},
            note="real model: transformers BERT"),
    program("deep_stack_compile_error", "bench/programs/deep_stack.py", {R: "compile_error"}, "none", "relu",
            note="12 blocks, the relu in block 6"),
    program("deep_stack_relu_accuracy", "bench/programs/deep_stack.py", {R: "accuracy"}, "accuracy", "relu",
            note="12 blocks, the relu in block 6"),
    program("cond_block_relu_accuracy", "testdata/reduce/control_flow_block.py", {R: "accuracy"}, "accuracy", "relu",
            {"kind": "cond"}, note="torch.cond, the relu in the branch taken"),
    program("while_block_compile_error", "testdata/reduce/control_flow_block.py", {R: "compile_error"}, "none", "relu",
            {"kind": "while"}, note="while_loop, the relu in its body"),
    program("mask_block_compile_error", "testdata/reduce/control_flow_block.py", {R: "compile_error"}, "none", "relu",
            {"kind": "mask"}, note="the relu after a boolean mask (a data-dependent size)"),
]
CONTROL_FLOW = ["cond_block_relu_accuracy", "while_block_compile_error", "mask_block_compile_error"]
SUBSET = ["relu_cos_compile_error", "log1p_relu_where", "mlp_runtime_error"]


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def timed(cmd, cwd, env, log_path, timeout):
    """Runs cmd under /usr/bin/time; returns (exit status, seconds, peak RSS in MiB of the
    largest process in its tree)."""
    rss_file = log_path + ".rss"
    start = time.time()
    with open(log_path, "w") as out:
        try:
            rc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file] + cmd, cwd=cwd, env=env, stdout=out,
                                stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    seconds = time.time() - start
    try:
        rss = int(open(rss_file).read().split()[-1]) / 1024
    except (OSError, ValueError, IndexError):
        rss = float("nan")
    return rc, seconds, rss


# What the original failure prints, by the planted config's value (and a crash's signal):
# upstream's repro.py "fails" only when it fails this way, not on an error of its own.
MARKERS = {"compile_error": "was not declared", "runtime_error": "", "accuracy": "Bad accuracy detected"}


def armed(env):
    return dict(env, AOTI_TEST_NULL_DEREF="1")


def repro_fails(directory, env, python, expect_exit=None, marker=None):
    """Whether `python repro.py` in directory still fails the same way: ours judges that
    itself (exit 1); upstream's must exit non-zero with `marker` in its output (a signal
    for a crash: marker "")."""
    path = os.path.join(directory, "repro.py")
    if not os.path.exists(path):
        return "no repro.py"
    try:
        r = subprocess.run([python, "repro.py"], cwd=directory, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=1800)
    except subprocess.TimeoutExpired:
        return "timeout"
    with open(os.path.join(directory, "repro_run.log"), "wb") as f:
        f.write(r.stdout)
    if expect_exit is not None:
        return "yes" if r.returncode == expect_exit else f"no (exit {r.returncode})"
    text = r.stdout.decode(errors="replace")
    if r.returncode == 0:
        return "no (passes)"
    if marker and marker in text:
        return "yes"
    if marker is None and "Traceback" in text and "AssertionError" not in text.splitlines()[-1]:
        return "yes"
    if not marker and r.returncode < 0:
        return f"yes (signal {-r.returncode})"
    last = [l for l in text.splitlines() if l.strip()][-1:] or ["?"]
    return f"no (another error: {last[0][:60].replace('|', '/')})"


def run_ours(p, package, work, args, env):
    out = os.path.join(work, p["name"], "ours")
    cache = os.path.join(work, p["name"], "compile_cache")
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    if args.header_seed:
        shutil.copytree(args.header_seed, os.path.join(cache, "precompiled_headers"))
    runfiles = os.path.join(args.bin, "reducer", "aoti_reduce.runfiles", "aoti_harness")
    cmd = [os.path.join(args.bin, "reducer", "aoti_reduce"), "minify", f"--package={package}", f"--out={out}",
           f"--aoti_runner={os.path.join(args.bin, 'harness', 'aoti_runner')}", f"--python={args.python}",
           f"--aoti_compile_cache_dir={cache}", "--jobs=1",
           # The reduction against upstream's: the stage ladder after it has no upstream
           # counterpart (its figures: RESULTS.md's own section).
           "--stage_ladder=false"]
    if p["crash"]:
        cmd += [f"--aoti_op_libraries={args.op_library}", "--aoti_runner_env=AOTI_TEST_NULL_DEREF=1"]
    if p["mode"] != "none":
        cmd += ["--failure_class=accuracy"]  # what upstream's --accuracy tells it
    rc, seconds, rss = timed(cmd, runfiles, env, out + ".log", args.timeout)
    row = dict(rc=rc, seconds=seconds, rss=rss)
    summary = os.path.join(out, "summary.json")
    if rc == 0 and os.path.exists(summary):
        s = json.load(open(summary))
        row.update(compiles=s["compiles"], nodes_before=s["nodes_before"], nodes_after=s["nodes_after"],
                   ops=s["ops"], keeps=any(p["culprit"] in op for op in s["ops"]))
        row["repro"] = repro_fails(out, armed(env), args.python, expect_exit=1)
        warm_out = out + "_warm"
        shutil.rmtree(warm_out, ignore_errors=True)
        warm = [c if not c.startswith("--out=") else f"--out={warm_out}" for c in cmd]
        wrc, wsec, _ = timed(warm, runfiles, env, warm_out + ".log", args.timeout)
        if wrc == 0:
            ws = json.load(open(os.path.join(warm_out, "summary.json")))
            row.update(warm_compiles=ws["compiles"], warm_seconds=wsec)
    shutil.rmtree(os.path.join(cache, "precompiled_headers"), ignore_errors=True)  # 280 MB
    return row


def run_upstream(p, work, args, env):
    out = os.path.join(work, p["name"], "upstream")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    os.makedirs(os.path.join(out, "tmp"))
    if args.header_seed:
        shutil.copytree(args.header_seed, headers_in(os.path.join(out, "tmp")))
    env = dict(armed(env), TORCHINDUCTOR_CACHE_DIR=os.path.join(out, "inductor_cache"), TMPDIR=os.path.join(out, "tmp"))
    cmd = [args.python, os.path.join(ROOT, "bench", "upstream_minifier.py"), os.path.join(ROOT, p["model"]),
           json.dumps(p["configs"]), p["mode"], "--model-kwargs", json.dumps(p["kwargs"])]
    if p["crash"]:
        cmd += ["--op-library", args.op_library]
    rc, seconds, rss = timed(cmd, out, env, out + ".log", args.timeout)
    row = dict(rc=rc, seconds=seconds, rss=rss)
    lines = [l for l in open(out + ".log").read().splitlines() if l.startswith("{")]
    if rc == 0 and lines:
        u = json.loads(lines[-1])
        row.update(compiles=u.get("queries"), nodes_before=u.get("nodes_before"), nodes_after=u.get("nodes_after"),
                   ops=u.get("targets", []), keeps=any(p["culprit"] in t for t in u.get("targets", [])))
        bugs = list(p["configs"].values())
        marker = MARKERS.get(bugs[0], "") if bugs else ""
        if bugs and bugs[0] == "runtime_error":
            marker = None  # a C++ throw: any failure of the compiled model
        row["repro"] = repro_fails(out, env, args.python, marker=marker)
    shutil.rmtree(os.path.join(out, "tmp"), ignore_errors=True)  # its precompiled headers: 280 MB
    return row


def headers_in(tmpdir):
    """Where inductor keeps its precompiled headers for a process whose TMPDIR is tmpdir."""
    return os.path.join(tmpdir, f"torchinductor_{getpass.getuser()}", "precompiled_headers")


SEED_MODEL = """
import torch
class M(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) + 1
ep = torch.export.export(M(), (torch.randn(4, 4),))
torch._inductor.aoti_compile_and_package(ep, package_path=__import__("sys").argv[1])
"""


def header_seed(work, args, env):
    """--warm-machine: inductor's precompiled headers, built once by a one-op AOTI compile in
    a TMPDIR of the bench's own, for both sides to start from."""
    tmp = os.path.join(work, "header_seed")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    seed_env = dict(env, TMPDIR=tmp, TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, "inductor_cache"))
    r = subprocess.run([args.python, "-c", SEED_MODEL, os.path.join(tmp, "seed.pt2")], env=seed_env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seed = headers_in(tmp)
    if r.returncode != 0 or not os.path.isdir(seed):
        raise SystemExit(f"bench: building the precompiled headers failed:\n{r.stdout[-2000:]}")
    log(f"precompiled headers for both sides: {seed} ({', '.join(sorted(os.listdir(seed)))})")
    return seed


def package(p, work, args, env):
    path = os.path.join(work, p["name"], "original.pt2")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    cmd = [args.python, os.path.join(ROOT, "tools", "package_model.py"), "--model", os.path.join(ROOT, p["model"]),
           "--out", path, "--export-only", "--inductor-configs", json.dumps(p["configs"]),
           "--model-kwargs", json.dumps(p["kwargs"])]
    if p["crash"]:
        cmd += ["--load-library", args.op_library]
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"packaging {p['name']} failed:\n{r.stdout[-3000:]}")
    return path


def cell(row, key, fmt="{}"):
    return fmt.format(row[key]) if key in row and row[key] is not None else "?"


def failed(row):
    return f"failed ({row['rc']})" if row.get("rc") != 0 else "no result"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="bazel-bin of the main workspace")
    ap.add_argument("--out", required=True, help="the report to write (markdown)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--op-library", default="", help="testdata/custom_ops/test_ops_for_python.so")
    ap.add_argument("--work", default="", help="where packages, repros and logs go (default: a new temp dir)")
    ap.add_argument("--subset", action="store_true", help=f"only {', '.join(SUBSET)} (about 10 minutes)")
    ap.add_argument("--control-flow", action="store_true", help=f"only {', '.join(CONTROL_FLOW)}")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per reduction")
    ap.add_argument("--warm-machine", action="store_true",
                    help="both sides start with inductor's precompiled headers built, as on a machine that "
                         "has compiled before; everything else stays cold")
    ap.add_argument("programs", nargs="*")
    args = ap.parse_args()
    known = {p["name"]: p for p in PROGRAMS}
    names = args.programs or (SUBSET if args.subset else CONTROL_FLOW if args.control_flow else
                              [p["name"] for p in PROGRAMS])
    for n in names:
        if n not in known:
            raise SystemExit(f"bench: unknown program '{n}'; known: {', '.join(known)}")
    work = args.work or tempfile.mkdtemp(prefix="aoti_bench_")
    os.makedirs(work, exist_ok=True)
    log(f"logs, packages and repros: {work}")
    # AOTI_TEST_NULL_DEREF=1 arms crash_block's custom op in every process that has it: ours
    # passes it to the isolated runner only (--aoti_runner_env), so packaging and our
    # in-process interpreter run with it unset; upstream runs candidates in its own process.
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "testdata", "real"), os.environ.get("PYTHONPATH", "")]))
    env.pop("AOTI_COMPILE_CACHE_DIR", None)
    env.pop("AOTI_TEST_NULL_DEREF", None)
    args.header_seed = header_seed(work, args, env) if args.warm_machine else ""
    started = time.time()
    rows = []
    for i, name in enumerate(names):
        p = known[name]
        log(f"{name}: packaging")
        try:
            pkg = package(p, work, args, env)
        except RuntimeError as e:
            log(str(e))
            nothing = dict(rc="packaging failed", seconds=0.0, rss=float("nan"))
            rows.append((p, nothing, nothing))
            continue
        sides = [("ours", lambda: run_ours(p, pkg, work, args, env)), ("upstream", lambda: run_upstream(p, work, args, env))]
        if i % 2:
            sides.reverse()
        result = {}
        for side, run in sides:
            log(f"{name}: {side}")
            result[side] = run()
            r = result[side]
            log(f"{name}: {side}: {cell(r, 'nodes_before')} -> {cell(r, 'nodes_after')} nodes, "
                f"{cell(r, 'compiles')} compiles, {r['seconds']:.0f} s, repro fails: {r.get('repro', '?')}")
        rows.append((p, result["ours"], result["upstream"]))
        # After each program, so that a run cut short keeps what it measured.
        write_report(args, rows, time.time() - started, work, done=len(rows) == len(names))


def ratio_line(label, pairs):
    ratios = [a / b for a, b in pairs if a is not None and b not in (None, 0)]
    if not ratios:
        return f"| {label} | ? | ? | 0 |"
    return f"| {label} | {statistics.median(ratios):.2f} | {max(ratios):.2f} | {len(ratios)} |"


def write_report(args, rows, seconds, work, done):
    torch_version = subprocess.run([args.python, "-c", "import torch; print(torch.__version__)"],
                                   capture_output=True, text=True).stdout.strip()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    flags = (" --subset" if args.subset else "") + (" --warm-machine" if args.header_seed else "")
    md = [f"# aoti_reduce against upstream's AOTI minifier{' (subset)' if args.subset else ''}"
          f"{', on a warm machine' if args.header_seed else ''}", "",
          f"Written by `bash bench/reducer_vs_upstream.sh{flags}` on "
          f"{datetime.date.today().isoformat()}, in {seconds / 60:.0f} min"
          f"{'' if done else ' (still running: the programs done so far)'}.", "",
          f"- machine: {os.cpu_count()} cores ({cpu}), {mem_gib:.0f} GiB, {platform.platform()}",
          f"- torch {torch_version}; upstream = `torch._dynamo.repro.aoti.repro_minify` of this wheel",
          ("- a warm machine (`--warm-machine`): each side starts with inductor's precompiled headers "
           "already built (the same files, copied in: ours into its disk compile cache, upstream's into its "
           "`TMPDIR`), as on a machine that has compiled before; everything else cold: a fresh inductor "
           "cache for each, an empty disk compile cache for ours"
           if args.header_seed else
           "- every run cold: a fresh inductor cache for each (the compile server's own, upstream's "
           "`TORCHINDUCTOR_CACHE_DIR`), no precompiled headers (built on each side's first compile: "
           "ours in the empty disk compile cache, upstream's in a fresh `TMPDIR`)"),
          "- ours on one compile server (`--jobs=1`); ours and upstream alternate which goes first",
          "- told the same: upstream's `accuracy` argument for the accuracy programs, ours "
          "`--failure_class=accuracy`; nothing for the others (ours finds the class in its first compile)",
          "- compiles: ours as `summary.json` counts them, the verifying compile included; upstream "
          "its \"Made N queries\" line (each query exports and compiles the candidate)",
          "- nodes: operator nodes (call_function); upstream also counts the `getitem` nodes that a "
          "serialized program folds into its multi-output node (3 per block's `chunk`), hence its larger "
          "counts; peak RSS: the largest process of the run",
          "- repro fails: the side's `repro.py`, run on its own, still fails the same way (ours judges that "
          "itself: exit 1; upstream's must fail with the original's error: the compiler's \"was not declared\", "
          "\"Bad accuracy detected\", the crash's signal, or the compiled model's exception for a runtime "
          "error, not an assertion in upstream's own code); the output is kept as `repro_run.log`",
          "- warm: ours run again with the same disk compile cache", "",
          "| program | nodes | ours: nodes after / keeps bug / compiles / s / MiB / repro fails | "
          "upstream: nodes after / keeps bug / compiles / s / MiB / repro fails | ours warm: compiles / s |",
          "| --- | ---: | --- | --- | --- |"]
    for p, o, u in rows:
        def side(r):
            if "compiles" not in r and "nodes_after" not in r:
                if isinstance(r["rc"], int) and r["rc"] < 0:
                    return f"crashed: killed by signal {-r['rc']}"
                if isinstance(r["rc"], int) and r["rc"] > 128:
                    return f"crashed: killed by signal {r['rc'] - 128}"
                return f"{failed(r)} after {r['seconds']:.0f} s"
            keeps = "yes" if r.get("keeps") else "NO"
            return (f"{cell(r, 'nodes_after')} / {keeps} / {cell(r, 'compiles')} / {r['seconds']:.0f} / "
                    f"{r['rss']:.0f} / {r.get('repro', '?')}")
        warm = f"{o['warm_compiles']} / {o['warm_seconds']:.0f}" if "warm_compiles" in o else "?"
        md.append(f"| `{p['name']}` ({p['note']}) | {cell(o, 'nodes_before')} | {side(o)} | {side(u)} | {warm} |")
    md += ["", "Ratios, ours / upstream, over the programs where both ended:", "",
           "| what | median | worst | programs |", "| --- | ---: | ---: | ---: |",
           ratio_line("compiles", [(o.get("compiles"), u.get("compiles")) for _, o, u in rows]),
           ratio_line("wall time", [(o["seconds"], u["seconds"]) for _, o, u in rows
                                    if "compiles" in o and "compiles" in u]),
           ratio_line("peak RSS", [(o["rss"], u["rss"]) for _, o, u in rows if "compiles" in o and "compiles" in u]),
           "",
           f"Against the medians: ours {statistics.median([o['compiles'] for _, o, _ in rows if 'compiles' in o] or [0])} "
           f"compiles and {statistics.median([o['seconds'] for _, o, _ in rows if 'compiles' in o] or [0]):.0f} s; "
           f"upstream {statistics.median([u['compiles'] for _, _, u in rows if u.get('compiles')] or [0])} compiles "
           f"and {statistics.median([u['seconds'] for _, _, u in rows if 'compiles' in u] or [0]):.0f} s.",
           "", f"Logs, packages and both sides' repros of this run: `{work}`.", ""]
    with open(args.out + ".tmp", "w") as f:
        f.write("\n".join(md))
    os.replace(args.out + ".tmp", args.out)
    if done:
        print("\n".join(md))
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
