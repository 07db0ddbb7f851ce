"""eager_bench: time Python eager (ep.module()(*inputs)) on each program archive given.

Prints "name<TAB>microseconds per run<TAB>runs" per program, measured like
interpreter_bench.cc: 3 warm-up runs, then at least 20 runs and 0.3 s.
"""
import io
import os
import sys
import time
import warnings
import zipfile

import torch

warnings.filterwarnings("ignore")


def sample_inputs(path):
    with zipfile.ZipFile(path) as z:
        entry = next(n for n in z.namelist() if n.endswith("data/sample_inputs/model.pt"))
        args, kwargs = torch.load(io.BytesIO(z.read(entry)))
    return args, kwargs


def main(paths):
    for path in paths:
        name = os.path.basename(path)[:-4]
        module = torch.export.load(path).module()
        args, kwargs = sample_inputs(path)
        with torch.no_grad():
            for _ in range(3):
                module(*args, **kwargs)
            runs, start = 0, time.perf_counter()
            while True:
                module(*args, **kwargs)
                runs += 1
                elapsed = time.perf_counter() - start
                if elapsed >= 0.3 and runs >= 20:
                    break
        print(f"{name}\t{elapsed / runs * 1e6:.1f}\t{runs}", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    while args[:1] == ["--load-library"]:
        torch.ops.load_library(args[1])  # custom operators some programs call
        args = args[2:]
    main(args)
