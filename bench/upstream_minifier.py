"""upstream_minifier: PyTorch's own AOTI minifier (torch._dynamo.repro.aoti.repro_minify)
on one failing program, for bench/bench.py.

  python upstream_minifier.py MODEL.py '{"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"}' \
      accuracy|strict_accuracy|none [--op-library LIB] [--model-kwargs JSON]

The model is exported as the packaging tool exports it (seeds 0 and 1, the model file's
dynamic_shapes() when it has one). Prints one JSON line: {"queries", "nodes_before",
"nodes_after", "targets", "seconds"}. Upstream runs every candidate in this process, so a
crashing candidate ends the run: the caller reports that from the exit status. Upstream
writes its final repro.py into the working directory.
"""
import argparse
import importlib.util
import json
import os
import re
import sys
import tempfile
import time
import warnings

warnings.filterwarnings("ignore")
import torch  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("configs", type=json.loads)
    ap.add_argument("accuracy", choices=["accuracy", "strict_accuracy", "none"])
    ap.add_argument("--op-library", default="")
    ap.add_argument("--model-kwargs", type=json.loads, default={})
    a = ap.parse_args()
    model_path, configs, accuracy = a.model, a.configs, a.accuracy
    if a.op_library:
        torch.ops.load_library(a.op_library)
    sys.path.insert(0, os.path.dirname(os.path.abspath(model_path)))
    spec = importlib.util.spec_from_file_location("scenario", model_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    model = module.make_model(**a.model_kwargs).eval()
    torch.manual_seed(1)
    dynamic = module.dynamic_shapes() if callable(getattr(module, "dynamic_shapes", None)) else None
    with torch.no_grad():
        ep = torch.export.export(model, module.example_inputs(), dynamic_shapes=dynamic, strict=False)
    nodes_before = sum(1 for n in ep.graph.nodes if n.op == "call_function")

    import functorch.compile as fc
    from torch._dynamo.repro import aoti

    result = {}
    original = fc.minifier

    def recording_minifier(*args, **kwargs):
        out = original(*args, **kwargs)
        gm = out[0] if isinstance(out, tuple) else out
        if gm is not None:
            targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
            result.update(nodes_after=len(targets), targets=targets)
        return out

    fc.minifier = recording_minifier
    options = argparse.Namespace(
        accuracy=None if accuracy == "none" else accuracy,
        check_str=None,
        minifier_export_mode="python",
        skip_export_error=True,
        save_dir=tempfile.mkdtemp(prefix="upstream_minifier_"),
        offload_to_disk=False,
        skip_saving_eager_intermediates=False,
        skip_sanity=False,
        max_granularity=None,
    )
    captured = []

    class Tee:
        def write(self, s):
            captured.append(s)
            sys.__stderr__.write(s)

        def flush(self):
            sys.__stderr__.flush()

    sys.stderr = Tee()
    start = time.time()
    aoti.repro_minify(options, ep, configs)
    seconds = time.time() - start
    sys.stderr = sys.__stderr__
    queries = re.findall(r"Made (\d+) queries", "".join(captured))
    result.update(queries=int(queries[-1]) if queries else None, nodes_before=nodes_before, seconds=round(seconds, 1))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
