"""In-place ops on intermediates: add_, mul_, relu_, clamp_, and an in-place slice copy."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def forward(self, x):
        y = x * 1.0
        y.add_(1.0)
        y.mul_(x)
        y.relu_()
        y[:, :2].clamp_(max=0.5)
        z = torch.zeros_like(x)
        z[1:] = y[:-1]
        return y, z


def make_model():
    return M()


def example_inputs():
    return (torch.randn(5, 6),)
