#!/usr/bin/env python3
"""A team's pipeline that ships two models in one archive (torch.export.pt2_archive's
package_pt2): an "encoder" and a "decoder", each with its exported program and compiled
model. Also writes another program (three inputs, not the encoder's two) for the packager's
mismatch errors.

  ship_two_models.py OUT_ARCHIVE OUT_OTHER_PROGRAM
"""
import os
import sys
import tempfile

os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="ship_two_models_")

import torch  # noqa: E402
from torch.export.pt2_archive._package import package_pt2  # noqa: E402


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 8)

    def forward(self, x, mask):
        return torch.relu(self.fc(x)) * mask


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, h):
        return {"logits": self.fc(h), "tokens": self.fc(h).argmax(-1)}


class Other(torch.nn.Module):
    def forward(self, a, b, c):
        return a + b * c


def main(out, other_out):
    torch.manual_seed(0)
    programs, files = {}, {}
    with torch.no_grad():
        for name, model, args in (("encoder", Encoder(), (torch.randn(4, 16), torch.ones(4, 8))),
                                  ("decoder", Decoder(), (torch.randn(4, 8),))):
            programs[name] = torch.export.export(model.eval(), args)
            files[name] = torch._inductor.aot_compile(programs[name].module(), args, options={"aot_inductor.package": True})
        torch.export.save(torch.export.export(Other(), (torch.ones(2), torch.ones(2), torch.ones(2))), other_out)
    package_pt2(out, exported_programs=programs, aoti_files=files)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
