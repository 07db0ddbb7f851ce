#!/usr/bin/env python3
"""package_model: export a PyTorch model, AOTI-compile it, and write one .pt2 archive.

The command of aoti_package and aoti_prebuilt_package. Its code is the package beside this
file, tools/aoti_package/, one module per concern; the archive's layout and the model file
contract are in tools/aoti_package/cli.py's docstring. `import package_model`
still gives every name of the package.
"""

import os
import sys

# The harness's own inductor_configs keys (ATen fallbacks, skipped decompositions) live
# beside this file (aoti_aten_fallbacks.py), shared with every repro.py and workaround.md;
# the package's modules import them from here.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aoti_package  # noqa: E402

# Every name of the package, as `import package_model` gave them before it was one.
globals().update({name: getattr(aoti_package, name) for name in aoti_package.__all__})

if __name__ == "__main__":
    sys.exit(aoti_package.main())
