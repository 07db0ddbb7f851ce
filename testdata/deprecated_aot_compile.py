"""deprecated_aot_compile: builds a bare AOTI shared object with the deprecated
torch._export.aot_compile, as older model repositories still do, for the triage test that
recognises it where a .pt2 package is expected.

    deprecated_aot_compile.py MODEL.py OUT.so
"""
import importlib.util
import os
import shutil
import sys
import tempfile
import warnings


def main(model_path, out):
    work = tempfile.mkdtemp(prefix="aoti_deprecated_")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(work, "inductor_cache")
    warnings.filterwarnings("ignore")
    import torch

    spec = importlib.util.spec_from_file_location("deprecated_model", model_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["deprecated_model"] = module  # aot_compile traces with dynamo, which imports it by name
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    model = module.make_model().eval()
    with torch.no_grad():
        so = torch._export.aot_compile(model, module.example_inputs(),
                                       options={"aot_inductor.output_path": os.path.join(work, "model.so")})
    shutil.copyfile(so, out)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: deprecated_aot_compile.py MODEL.py OUT.so")
    main(sys.argv[1], sys.argv[2])
