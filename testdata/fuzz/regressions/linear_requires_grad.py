"""Fuzz regression: F.linear on a transposed 4-D input with a weight that requires grad.

Found by gen_programs.py (seed 102509): the interpreter's output differed from Python's in
the last bit of 20 of 75 elements. matmul folds a batched input into one mm only when the
weight does not require grad; torch.export.load gives parameters requires_grad=True, the
interpreter loaded them without it, and so took the other path.
"""
import torch
import torch.nn.functional as F


def _special(t, seed):
    g = torch.Generator().manual_seed(seed)
    flat = t.reshape(-1)
    picks = torch.randint(0, flat.numel(), (max(1, flat.numel() // 5),), generator=g)
    values = torch.tensor([float("nan"), float("inf"), float("-inf"), 0.0, 1e4, -1e-8])
    flat[picks] = values[torch.randint(0, len(values), picks.shape, generator=g)]
    return t


class Program(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.p0 = torch.nn.Parameter(torch.randn([5, 5]))
        self.p1 = torch.nn.Parameter(torch.randn([5]))

    def forward(self, x0, x1, x2):
        v0 = torch.eq(x2, x2)
        v1 = x0.clone()
        v1.mul_(0.5)
        v2 = F.group_norm(x2, 1)
        v3 = torch.atan(x2)
        v4 = v2.clone()
        v4.relu_()
        v5 = v2.mT
        v6 = torch.trunc(v1)
        v7 = F.linear(v5, self.p0, self.p1)
        return (v7, v0, v3, v6,)


def make_model():
    return Program()


def example_inputs():
    return (torch.randn([6, 3, 5, 5]), torch.randint(0, 6, [3, 4]), torch.randn([1, 3, 5, 5]),)
