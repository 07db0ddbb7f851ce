"""cat, stack, split, chunk, unbind, narrow."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def forward(self, x, y):
        c = torch.cat([x, y], dim=1)
        s = torch.stack([x, y])
        p1, p2, p3 = c.split([2, 3, 5], dim=1)
        q = c.chunk(2, dim=0)
        u = s.unbind(0)
        return p1 + 1, p2.sum(1), p3, q[1], u[0] * u[1], c.narrow(1, 4, 3)


def make_model():
    return M()


def example_inputs():
    return (torch.randn(4, 5), torch.randn(4, 5))
