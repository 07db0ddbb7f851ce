"""Dtype arguments in float64 mode, as upstream's cast_to_fp64 treats them: a dtype=
keyword (torch.ones) becomes float64, a positional dtype (x.to(torch.float16)) stays, and
a bitcast of integer bits to float32 (view.dtype) stays a bitcast."""
import torch


class DtypeArgs(torch.nn.Module):
    def forward(self, x, bits):
        h = x.to(torch.float16).to(torch.float32)
        z = torch.ones(x.shape[-1], dtype=torch.float32)
        f = bits.view(torch.float32)
        return h + z, f * 2


def make_model():
    return DtypeArgs()


def example_inputs():
    x = torch.randn(4, 8)
    return x, torch.randn(4, 8).view(torch.int32)
