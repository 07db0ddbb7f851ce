"""Advanced indexing: x[idx], x[:, idx], index_put with accumulate, boolean mask select."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def forward(self, x, idx, vals):
        a = x[idx]
        b = x[:, idx]
        c = x.index_put((idx,), vals, accumulate=True)
        d = x[x > 0]
        return a, b, c, d.sum()


def make_model():
    return M()


def example_inputs():
    return (torch.randn(6, 6), torch.tensor([0, 2, 2, 5]), torch.randn(4, 6))
