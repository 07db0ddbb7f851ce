"""The packager's persistent worker speaks Bazel's worker protocol and keeps requests apart.

The protocol's messages round-trip (a WorkRequest as Bazel writes it, with the fields the
worker skips; a WorkResponse read back by a hand decoder). A worker started as Bazel starts
one (--persistent_worker) answers requests in order, each with its id: a command's output
and exit status, a command that raises (its traceback, status 1), a command that calls
sys.exit with a message, a request whose one argument is a param file. A request does not
see what an earlier one did to the process (a module global, os.environ). The worker's own
imports print nothing on the protocol's stdout. On SIGTERM, as Bazel stops it, the worker
removes its own temporary directory (inductor's shared cache directory is inductor's). Without --persistent_worker, the @flagfile's
command runs and its status is the worker's. Every AotiPackage action of //... runs the
packager itself through this worker.
"""
import os
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import package_worker as pw  # noqa: E402

tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


# --- the messages ---------------------------------------------------------------------

def field(number, wire, payload):
    return pw._varint(number << 3 | wire) + payload


def length_delimited(number, data):
    return field(number, 2, pw._varint(len(data)) + data)


# A WorkRequest as Bazel writes it: arguments, inputs (path, digest), request_id, verbosity.
request = (length_delimited(1, b"cmd.py") + length_delimited(1, "--name=é".encode())
           + length_delimited(2, length_delimited(1, b"a/b.py") + length_delimited(2, b"\x01\x02"))
           + field(3, 0, pw._varint(300)) + field(5, 0, pw._varint(10)))
check(pw.parse_work_request(request) == (["cmd.py", "--name=é"], 300), "a WorkRequest's arguments and id")
check(pw.parse_work_request(b"") == ([], 0), "an empty WorkRequest (singleplex, no arguments)")
try:
    pw.parse_work_request(length_delimited(1, b"abc")[:-1])
    check(False, "a truncated WorkRequest is refused")
except ValueError:
    pass


def decode_response(data):
    n, i = pw._varint_at(data, 0)
    body, rest = data[i:i + n], data[i + n:]
    out, j = {"exit_code": 0, "output": "", "request_id": 0}, 0
    while j < len(body):
        key, j = pw._varint_at(body, j)
        if key & 7 == 0:
            value, j = pw._varint_at(body, j)
            if value >= 1 << 63:
                value -= 1 << 64
            out["exit_code" if key >> 3 == 1 else "request_id"] = value
        else:
            size, j = pw._varint_at(body, j)
            out["output"] = body[j:j + size].decode()
            j += size
    return out, rest


resp, rest = decode_response(pw.encode_work_response(3, "héllo\n", 7) + b"tail")
check(resp == {"exit_code": 3, "output": "héllo\n", "request_id": 7} and rest == b"tail", f"a WorkResponse round-trips: {resp}")
resp, _ = decode_response(pw.encode_work_response(-1, "", 0))
check(resp["exit_code"] == -1, "a negative exit code is written as protobuf writes an int32")

# --- arguments ------------------------------------------------------------------------

flagfile = os.path.join(tmp, "flags")
with open(flagfile, "w") as f:
    f.write("cmd.py\n--x=1\n--y=a b\n")
check(pw.read_flagfile_args(["@" + flagfile]) == ["cmd.py", "--x=1", "--y=a b"], "a param file's lines are the arguments")
check(pw.read_flagfile_args(["@repo//pkg:target"]) == ["@repo//pkg:target"], "a label is not read as a file")
check(pw.read_flagfile_args(["@" + flagfile, "more"]) == ["@" + flagfile, "more"], "only a lone @FILE is expanded")

# --- a worker, as Bazel runs one --------------------------------------------------------

script = os.path.join(tmp, "cmd.py")
with open(script, "w") as f:
    f.write('''import os, sys
import package_worker_test_state as state
what = sys.argv[1]
print("seen", state.SEEN, os.environ.get("WORKER_TEST_MARK"), flush=True)
state.SEEN.append(what)
os.environ["WORKER_TEST_MARK"] = what
if what == "fail":
    sys.exit(3)
if what == "raise":
    raise RuntimeError("boom from the command")
if what == "message":
    sys.exit("a message from the command")
print("done", what, sys.argv[2:], file=sys.stderr)
''')
with open(os.path.join(tmp, "package_worker_test_state.py"), "w") as f:
    f.write("SEEN = []\n")
with open(os.path.join(tmp, "params"), "w") as f:
    f.write(f"{script}\nparam\n--flag=with space\n")

worker_tmp = os.path.join(tmp, "worker_tmp")
os.makedirs(worker_tmp)
env = dict(os.environ, TMPDIR=worker_tmp, PYTHONPATH=tmp)
env.pop("WORKER_TEST_MARK", None)
proc = subprocess.Popen([sys.executable, os.path.join(HERE, "package_worker.py"), "--persistent_worker"],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def ask(args, request_id):
    body = b"".join(length_delimited(1, a.encode()) for a in args) + field(3, 0, pw._varint(request_id))
    proc.stdin.write(pw._varint(len(body)) + body)
    proc.stdin.flush()
    n = pw._read_varint(proc.stdout)
    check(n is not None, f"request {request_id} is answered")
    data = proc.stdout.read(n)
    resp, _ = decode_response(pw._varint(n) + data)
    return resp


r = ask([script, "ok", "--a"], 1)
check(r["request_id"] == 1 and r["exit_code"] == 0, f"a command that succeeds: {r}")
check("seen [] None" in r["output"] and "done ok ['--a']" in r["output"], f"its stdout and stderr are the output: {r['output']!r}")
r = ask([script, "fail"], 2)
check(r["request_id"] == 2 and r["exit_code"] == 3, f"sys.exit(3) is status 3: {r}")
check("seen [] None" in r["output"], f"a request does not see an earlier one's globals or environment: {r['output']!r}")
r = ask([script, "raise"], 3)
check(r["exit_code"] == 1 and "RuntimeError: boom from the command" in r["output"], f"an uncaught error: its traceback, status 1: {r}")
r = ask([script, "message"], 4)
check(r["exit_code"] == 1 and "a message from the command" in r["output"], f"sys.exit(message): status 1, the message: {r}")
r = ask(["@" + os.path.join(tmp, "params")], 5)
check(r["exit_code"] == 0 and "done param ['--flag=with space']" in r["output"], f"a param file request: {r}")
r = ask([], 6)
check(r["exit_code"] == 2 and "without arguments" in r["output"], f"a request without arguments is refused by name: {r}")
r = ask([os.path.join(tmp, "missing.py")], 7)
check(r["exit_code"] == 1 and "missing.py" in r["output"], f"a command that does not exist: {r}")
r = ask([script, "ok"], 8)
check(r["request_id"] == 8 and r["exit_code"] == 0 and "seen [] None" in r["output"], f"the worker serves on after failures: {r}")

proc.send_signal(signal.SIGTERM)
try:
    proc.wait(timeout=60)
except subprocess.TimeoutExpired:
    proc.kill()
    check(False, "the worker stops on SIGTERM")
check(proc.stdout.read() == b"", "nothing but answers on the protocol's stdout")
left = [n for n in os.listdir(worker_tmp) if n.startswith("aoti_package_worker_")]
check(left == [], f"the worker leaves no directory of its own behind: {os.listdir(worker_tmp)}")

# A worker killed with SIGKILL (as Bazel kills one at times) leaves its directory; the next
# worker to start removes it, and leaves a live process's and an unnumbered one's alone.
dead = subprocess.Popen([sys.executable, "-c", "pass"])
dead.wait()
stale = os.path.join(worker_tmp, f"{pw.WARM_PREFIX}{dead.pid}_abc")
live = os.path.join(worker_tmp, f"{pw.WARM_PREFIX}{os.getpid()}_abc")
unnumbered = os.path.join(worker_tmp, f"{pw.WARM_PREFIX}abc")
for d in (stale, live, unnumbered):
    os.makedirs(os.path.join(d, "sub"))
check(pw.remove_stale_warm_dirs(worker_tmp) == [stale], "a dead worker's directory is removed")
check(not os.path.exists(stale) and os.path.isdir(live) and os.path.isdir(unnumbered),
      f"only the dead worker's directory goes: {os.listdir(worker_tmp)}")
for d in (live, unnumbered):
    os.rename(d, os.path.join(tmp, os.path.basename(d)))
proc = subprocess.Popen([sys.executable, os.path.join(HERE, "package_worker.py"), "--persistent_worker"],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
r = ask([script, "ok"], 9)
check(r["exit_code"] == 0, f"a worker answers before it is killed: {r}")
mine = [n for n in os.listdir(worker_tmp) if n.startswith(f"{pw.WARM_PREFIX}{proc.pid}_")]
check(len(mine) == 1, f"a worker's directory carries its process id: {os.listdir(worker_tmp)}")
proc.kill()
proc.wait()
os.makedirs(os.path.join(worker_tmp, mine[0] if mine else "x", "left"), exist_ok=True)
# The next worker removes it; at the end of its input it exits 0, its own directory gone.
proc = subprocess.Popen([sys.executable, os.path.join(HERE, "package_worker.py"), "--persistent_worker"],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
r = ask([script, "ok"], 10)
check(mine and not os.path.exists(os.path.join(worker_tmp, mine[0])),
      f"the next worker removes the killed one's directory: {os.listdir(worker_tmp)}")
out, _ = proc.communicate(b"", timeout=120)
check(proc.returncode == 0 and out == b"", f"at the end of its input the worker exits 0 (status {proc.returncode})")
check([n for n in os.listdir(worker_tmp) if n.startswith(pw.WARM_PREFIX)] == [],
      f"and leaves no directory of its own: {os.listdir(worker_tmp)}")

# --- not a worker: one @flagfile, run -------------------------------------------------

with open(os.path.join(tmp, "params_fail"), "w") as f:
    f.write(f"{script}\nfail\n")
done = subprocess.run([sys.executable, os.path.join(HERE, "package_worker.py"), "@" + os.path.join(tmp, "params_fail")],
                      capture_output=True, text=True, env=env)
check(done.returncode == 3 and "seen [] None" in done.stdout, f"without --persistent_worker the flagfile's command runs: {done}")
done = subprocess.run([sys.executable, os.path.join(HERE, "package_worker.py")], capture_output=True, text=True, env=env)
check(done.returncode == 2 and "usage" in done.stderr, f"no command: usage, status 2: {done}")

if failures:
    print(f"{len(failures)} check(s) failed", flush=True)
    sys.exit(1)
print("package_worker: protocol, isolation, param files, shutdown: OK")
