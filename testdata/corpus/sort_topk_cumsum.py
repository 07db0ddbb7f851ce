"""cumsum, cumprod, sort, topk, argsort, kthvalue."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def forward(self, x):
        s, i = torch.sort(x, dim=-1, descending=True)
        t = torch.topk(x, 3, dim=1)
        return x.cumsum(1), (x * 0.1 + 1).cumprod(0), s, i, t.values, t.indices, x.argsort(dim=0), x.kthvalue(2, dim=1).values


def make_model():
    return M()


def example_inputs():
    return (torch.randn(4, 9),)
