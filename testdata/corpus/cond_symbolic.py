"""torch.cond on a dynamic size (its predicate a symbolic bool, as_sym_bool): short
sequences take one branch, long ones the other."""
import torch


class CondSymbolic(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(6, 6)

    def forward(self, x):
        def short(h):
            return (self.proj(h).relu(),)

        def long(h):
            return (self.proj(h).sigmoid(),)

        return torch.cond(x.shape[0] > 4, long, short, (x,))[0] * 2


def make_model():
    return CondSymbolic()


def example_inputs():
    return (torch.randn(3, 6),)


def dynamic_shapes():
    return ({0: torch.export.Dim("seq", min=2, max=16)},)
