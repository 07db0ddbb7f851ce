"""The packaging action refuses a host whose CPU ISA differs from the build key's (a remote
executor of another ISA), and accepts the host the key was made on."""
import contextlib
import io
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import package_model  # noqa: E402

tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
cpuinfo = os.path.join(tmp, "cpuinfo")
with open(cpuinfo, "w") as f:
    f.write("processor\t: 0\nflags\t\t: fpu sse4_2 avx avx2 fma f16c avx512f avx512_bf16 amx_tile\n")


def key(flags):
    path = os.path.join(tmp, "key_%d.json" % len(flags))
    with open(path, "w") as f:
        json.dump({"torch_version": "2.13.0+cpu", "cpu_isa_flags": flags}, f)
    return path


failures = []
assert package_model.host_isa_flags(cpuinfo) == ["amx_tile", "avx", "avx2", "avx512_bf16", "avx512f", "f16c", "fma", "sse4_2"]
# The host the key was made on.
package_model.check_build_key(key(package_model.host_isa_flags(cpuinfo)), cpuinfo)
# An executor without AVX-512 (the key's client has it).
try:
    package_model.check_build_key(key(["avx", "avx2", "f16c", "fma", "sse4_2"]), cpuinfo)
    failures.append("a host with more vector extensions than the key was accepted")
except package_model.ContractError as e:
    for words in ("this host has amx_tile avx512_bf16 avx512f that the key lacks", "platform property"):
        if words not in str(e):
            failures.append(f"the refusal does not say {words!r}: {e}")
# A key that cannot be read is named.
try:
    package_model.check_build_key(os.path.join(tmp, "missing.json"), cpuinfo)
    failures.append("a missing key was accepted")
except package_model.ContractError as e:
    if "--build-key" not in str(e):
        failures.append(f"the missing key is not named: {e}")
# Through the command line, on this very host: a key of another ISA stops the action
# before the model file is read (exit 2, one ERROR line).
other = key(["avx512f", "avx512_vnni_not_here"])
err = io.StringIO()
with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
    rc = package_model.main(["--model", os.path.join(tmp, "no_model.py"), "--out", os.path.join(tmp, "o.pt2"),
                             "--build-key", other])
if rc != 2 or "CPU vector extensions differ" not in err.getvalue():
    failures.append(f"main exited {rc}: {err.getvalue()[-400:]}")
if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("package_model_build_key_test: PASS")
