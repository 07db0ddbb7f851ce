#!/usr/bin/env bash
# torch_load_test: upstream PyTorch reads aoti_package archives as they are:
# torch.export.load gives the program, and the compiled model (when present) loads and
# runs on the recorded sample inputs with aoti_load_package.
# Usage: torch_load_test.sh PYTHON ARCHIVE...
set -euo pipefail
python="$1"
shift
"$python" - "$@" <<'PY'
import io, sys, warnings, zipfile
warnings.filterwarnings("ignore")
import torch
for path in sys.argv[1:]:
    ep = torch.export.load(path)
    assert len(list(ep.graph.nodes)) > 0, path
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        entry = next(n for n in names if n.endswith("data/sample_inputs/model.pt"))
        args, kwargs = torch.load(io.BytesIO(z.read(entry)))
    if any("/data/aotinductor/model/" in n for n in names):
        out = torch._inductor.aoti_load_package(path)(*args, **kwargs)
        print(f"{path}: program and compiled model load; {len(out) if isinstance(out, (list, tuple)) else 1} output(s)")
    else:
        print(f"{path}: program loads ({len(list(ep.graph.nodes))} nodes)")
PY
