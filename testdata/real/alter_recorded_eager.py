#!/usr/bin/env python3
"""A test fixture: a copy of a harness package whose recorded Python eager output 0 is
altered (1.0 added to every value), as an interpreter bug would look from the other side.
The package's program and compiled model are untouched.

  alter_recorded_eager.py IN.pt2 OUT.pt2
"""
import json
import sys
import zipfile

import torch


def main(src, dst):
    with zipfile.ZipFile(src) as z:
        names = z.namelist()
        top_in = names[0].split("/")[0]
        top_out = dst.rsplit("/", 1)[-1][: -len(".pt2")]
        manifest = json.loads(z.read(f"{top_in}/extra/aoti_harness/package.json"))
        rec = manifest["eager_outputs"][0]
        target = f"{top_in}/aoti_harness/{rec['file']}"
        dtype = getattr(torch, rec["dtype"])
        with zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as w:
            for n in names:
                data = z.read(n)
                if n == target:
                    t = torch.frombuffer(bytearray(data), dtype=dtype) + 1
                    data = t.numpy().tobytes()
                w.writestr(top_out + n[len(top_in):], data)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
