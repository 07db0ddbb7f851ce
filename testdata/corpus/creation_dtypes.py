"""Tensors created inside the graph with explicit dtypes: arange, zeros, full, ones_like, to(dtype)."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def forward(self, x):
        pos = torch.arange(x.shape[1], dtype=torch.float32)
        z = torch.zeros(x.shape[0], 1, dtype=torch.float32)
        f = torch.full((1, x.shape[1]), 0.25)
        h = (x + pos).to(torch.float16).to(torch.float32)
        return h + z + f, torch.ones_like(x, dtype=torch.int64).sum(1), x.to(torch.float64) * 3


def make_model():
    return M()


def example_inputs():
    return (torch.randn(4, 7),)
