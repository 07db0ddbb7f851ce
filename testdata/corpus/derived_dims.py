"""Derived dimensions, as torch.export writes them: y's rows are twice x's (2*dx, bound by x),
and z's rows are twice a root no input has by itself (2*dz, solved from the sample)."""
import torch
from torch.export import Dim


class M(torch.nn.Module):
    def forward(self, x, y, z):
        pairs = z.reshape(2, -1, z.shape[-1]).sum(0)
        return torch.cat([x, x], 0) * 2 + y, pairs.relu()


def make_model():
    return M()


def example_inputs():
    return (torch.randn(4, 3), torch.randn(8, 3), torch.randn(6, 5))


def dynamic_shapes():
    dx, dz = Dim("dx", min=2, max=32), Dim("dz", min=1, max=16)
    return ({0: dx}, {0: 2 * dx}, {0: 2 * dz})
