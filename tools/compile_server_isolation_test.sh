#!/usr/bin/env bash
# compile_server_isolation_test: two compile servers started side by side (as two test
# shards or two model tests reducing at once) each compile into an inductor cache of
# their own, even when TORCHINDUCTOR_CACHE_DIR names a shared one, and remove it when
# they exit.
# Usage: compile_server_isolation_test.sh PYTHON COMPILE_SERVER_PY
set -euo pipefail
python="$1" server="$2"
export TORCHINDUCTOR_CACHE_DIR="${TEST_TMPDIR:-/tmp}/shared_inductor_cache"
"$python" - "$server" <<'PY'
import json, os, subprocess, sys

server = sys.argv[1]
def start():
    r, w = os.pipe()
    p = subprocess.Popen([sys.executable, server, "--answer-fd", str(w)], stdin=subprocess.PIPE, pass_fds=(w,),
                         stderr=subprocess.DEVNULL, text=True)
    os.close(w)
    return p, os.fdopen(r)

def ask(p, answers, req):
    p.stdin.write(json.dumps(req) + "\n")
    p.stdin.flush()
    return json.loads(answers.readline())

servers = [start(), start()]
caches = [ask(p, a, {"id": 1, "op": "ping"})["inductor_cache"] for p, a in servers]
print("inductor caches:", caches)
ok = len(set(caches)) == 2 and not any(c.startswith(os.environ["TORCHINDUCTOR_CACHE_DIR"]) for c in caches)
for p, a in servers:
    ask(p, a, {"id": 2, "op": "shutdown"})
    p.wait(timeout=60)
gone = not any(os.path.exists(os.path.dirname(c)) for c in caches)
print("private:", ok, "removed at exit:", gone)
sys.exit(0 if ok and gone else 1)
PY
