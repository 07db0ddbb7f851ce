#!/usr/bin/env python3
"""A compile server that misbehaves on purpose, for compile_client_test.

It speaks tools/compile_server.py's protocol (JSON lines in on stdin, answers on
--answer-fd), but before each compile answer it reads what to do from the file named by
FAKE_SERVER_MODE_FILE:
  ok            answer properly (`out`: a copy of the candidate archive, with no compiled model)
  nothing       answer properly, writing nothing to `out` (an archive that vanished)
  write_error   answer that the archive could not be written (phase "write")
  stdout        print garbage on stdout first, then answer properly
  hang          never answer
  slow_start    answer the start-up ping only after 60 s (torch importing on a loaded machine)
  die           write half an answer, then exit
  wrong_id      answer with an id that was never sent
  null_id       answer with "id": null (as an error outside the request's try once did)
  bad_types     answer with fields of the wrong type ("ok": "yes", "error": 3)
  not_json      answer with a line that is not JSON
Its pid goes to FAKE_SERVER_PID_FILE, one line per start.
"""
import json
import os
import sys
import time

answer_fd = int(sys.argv[sys.argv.index("--answer-fd") + 1])
out = os.fdopen(answer_fd, "w")
with open(os.environ["FAKE_SERVER_PID_FILE"], "a") as f:
    f.write(f"{os.getpid()}\n")


def send(obj_or_text):
    out.write((obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text)) + "\n")
    out.flush()


for line in sys.stdin:
    req = json.loads(line)
    if req.get("op") == "ping":
        if open(os.environ["FAKE_SERVER_MODE_FILE"]).read().strip() == "slow_start":
            time.sleep(60)
        send({"id": req["id"], "ok": True, "pid": os.getpid()})
        continue
    mode = open(os.environ["FAKE_SERVER_MODE_FILE"]).read().strip()
    good = {"id": req["id"], "ok": True, "phase": "done", "seconds": 0.01, "out": req.get("out", "")}
    if mode == "ok":
        if req.get("out") and os.path.isfile(str(req.get("program"))):
            with open(req["program"], "rb") as src, open(req["out"], "wb") as dst:
                dst.write(src.read())
        send(good)
    elif mode == "nothing":
        send(good)
    elif mode == "write_error":
        send({"id": req["id"], "ok": False, "phase": "write", "seconds": 0.01,
              "error": {"type": "OSError", "message": "No space left on device"}})
    elif mode == "stdout":
        sys.stdout.write('{"id": 999, "ok": false}\nnot json at all\n')
        sys.stdout.flush()
        send(good)
    elif mode == "hang":
        while True:
            time.sleep(60)
    elif mode == "die":
        out.write('{"id": %d, "ok": tr' % req["id"])
        out.flush()
        os._exit(3)
    elif mode == "wrong_id":
        send(dict(good, id=req["id"] + 1000))
    elif mode == "null_id":
        send(dict(good, id=None))
    elif mode == "bad_types":
        send({"id": req["id"], "ok": "yes", "phase": 7, "error": 3})
    elif mode == "not_json":
        send("<<< not an answer >>>")
    else:
        sys.exit(f"fake_compile_server: unknown mode {mode!r}")
