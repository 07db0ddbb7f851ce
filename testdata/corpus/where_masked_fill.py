"""where with a tensor and a scalar branch, masked_fill, clamp by mask."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def forward(self, x, y):
        m = x > y
        a = torch.where(m, x, y)
        b = torch.where(m, x, 0.0)
        c = x.masked_fill(m, -1.5)
        return a, b, c


def make_model():
    return M()


def example_inputs():
    return (torch.randn(5, 7), torch.randn(5, 7))
