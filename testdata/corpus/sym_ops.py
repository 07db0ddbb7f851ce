"""SymInt and SymBool arithmetic under dynamic shapes: torch.sym_max, sym_min, sym_not,
sym_ite and the and_ of two SymBools (a bool, not an int), feeding a tensor's size."""
import torch


class SymOps(torch.nn.Module):
    def forward(self, x, y):
        a, b = x.shape[0], y.shape[0]
        hi, lo = torch.sym_max(a, b), torch.sym_min(a, b)
        both = (a > 1) & (b > 1)
        pick = torch.sym_ite(torch.sym_not(both), hi, lo)
        return torch.ones(hi + lo + pick, 2) * x.sum() + y.mean()


def make_model():
    return SymOps()


def example_inputs():
    return torch.randn(4, 2), torch.randn(6, 2)


def dynamic_shapes():
    return ({0: torch.export.Dim("a", min=2, max=64)}, {0: torch.export.Dim("b", min=2, max=64)})
