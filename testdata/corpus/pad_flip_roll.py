"""Constant and reflect padding, flip, roll, repeat, tile."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def forward(self, x):
        return (F.pad(x, (1, 2, 0, 1), value=0.5), F.pad(x.unsqueeze(0), (2, 2), mode="reflect"),
                x.flip(1), x.roll(2, dims=1), x.repeat(2, 1), x.tile((1, 2)))


def make_model():
    return M()


def example_inputs():
    return (torch.randn(3, 6),)
