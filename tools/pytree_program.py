"""A program that returns a library's pytree type, as a transformers ModelOutput is: the
fixture of the tests that hold the harness's readers to importing only declared modules
(tools/aoti_package_test.py, reducer/repro/repro_template_test.py)."""
import os
import subprocess
import sys


def write(lib, module, pt2):
    """Writes `lib`/`module`.py (a dataclass Out registered with torch.export, which leaves a
    file `imported` in `lib` when the module is imported) and, from a child process, `pt2`:
    an exported program returning Out(relu(x)). Returns the marker's path; it does not exist
    until something imports the module again."""
    marker = os.path.join(lib, "imported")
    with open(os.path.join(lib, module + ".py"), "w") as f:
        f.write(f"open({marker!r}, 'w').close()\n"
                "import dataclasses, torch\n"
                "@dataclasses.dataclass\n"
                "class Out:\n    logits: torch.Tensor\n"
                f"torch.export.register_dataclass(Out, serialized_type_name={module + '.Out'!r})\n")
    code = (f"import sys, torch; sys.path.insert(0, {lib!r}); import {module} as team\n"
            "class M(torch.nn.Module):\n    def forward(self, x): return team.Out(x.relu())\n"
            f"torch.export.save(torch.export.export(M(), (torch.randn(2),)), {pt2!r})\n")
    subprocess.run([sys.executable, "-c", code], check=True)
    os.remove(marker)
    return marker
