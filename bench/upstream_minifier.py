"""upstream_minifier: PyTorch's own AOTI minifier (torch._dynamo.repro.aoti.repro_minify)
on one failing scenario, for bench/reducer_vs_upstream.sh.

  python upstream_minifier.py MODEL.py '{"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"}' \
      accuracy|strict_accuracy|none [OP_LIBRARY]

Prints one JSON line: {"queries", "nodes_before", "nodes_after", "targets", "seconds"}.
Upstream runs every candidate in this process, so a crashing candidate ends the run: the
calling script reports that from the exit status.
"""
import argparse
import importlib.util
import json
import re
import sys
import tempfile
import time
import warnings

warnings.filterwarnings("ignore")
import torch  # noqa: E402


def main():
    model_path, configs, accuracy = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
    if len(sys.argv) > 4:
        torch.ops.load_library(sys.argv[4])
    spec = importlib.util.spec_from_file_location("scenario", model_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    model = module.make_model().eval()
    torch.manual_seed(1)
    ep = torch.export.export(model, module.example_inputs())
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
