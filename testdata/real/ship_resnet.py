#!/usr/bin/env python3
"""The model team's release pipeline, as a team writes it with PyTorch's own APIs (no harness
code): build the ResNet classifier, export it, compile it with AOTInductor, write what ships.

  ship_resnet.py --form archive --out classifier.pt2 [--inductor-configs JSON]
      one archive holding the exported program and the compiled model, both named
      "classifier" (torch.export.pt2_archive's package_pt2 with aot_compile's files)
  ship_resnet.py --form split --out model.pt2 --program-out model_ep.pt2 --inputs-out inputs.pt
      [--inductor-configs JSON]
      aoti_compile_and_package's .pt2, the program saved by torch.export.save, and the
      inputs saved by torch.save as (args, kwargs)
"""
import argparse
import json
import os
import sys
import tempfile

# The pipeline compiles in a cache of its own.
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="ship_resnet_")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from torch.export.pt2_archive._package import package_pt2  # noqa: E402

import resnet  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--form", choices=["archive", "split"], required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--program-out")
    p.add_argument("--inputs-out")
    p.add_argument("--inductor-configs", default="{}")
    args = p.parse_args()
    configs = json.loads(args.inductor_configs)
    torch.manual_seed(0)
    model = resnet.make_model().eval()
    torch.manual_seed(1)
    kwargs = resnet.example_kwargs()
    with torch.no_grad():
        ep = torch.export.export(model, (), kwargs)
    if args.form == "archive":
        files = torch._inductor.aot_compile(ep.module(), (), kwargs, options={"aot_inductor.package": True, **configs})
        package_pt2(args.out, exported_programs={"classifier": ep}, aoti_files={"classifier": files})
    else:
        torch._inductor.aoti_compile_and_package(ep, package_path=args.out, inductor_configs=configs)
        torch.export.save(ep, args.program_out)
        torch.save(((), kwargs), args.inputs_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
