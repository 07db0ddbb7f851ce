"""torch.cond twice: branches that close over layers (their parameters lifted into the
operands), one predicate true and one false on the sample inputs, two results, and a cond
nested in a branch. (A branch may not return an operand as it is: AOTI refuses the alias.)"""
import torch


class CondBranches(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.gate = torch.nn.Linear(8, 8)

    def forward(self, x):
        def inner_true(h):
            return torch.sigmoid(h) * 2

        def inner_false(h):
            return h - 1

        def big(h):
            g = torch.relu(self.lin(h))
            return torch.cond(g.mean() > 0, inner_true, inner_false, (g,)), h.clone()

        def small(h):
            return torch.tanh(self.gate(h)), h * 0.5

        a, b = torch.cond(x.sum() > -1000, big, small, (x,))
        c = torch.cond(a.max() > 1000, lambda h: (h * 3,), lambda h: (h.cos(),), (a,))[0]
        return c + b


def make_model():
    return CondBranches()


def example_inputs():
    return (torch.randn(4, 8),)
