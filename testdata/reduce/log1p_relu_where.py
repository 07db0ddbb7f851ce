"""Upstream's accuracy-vs-strict-accuracy case: a bool mask from log1p that cannot change
the result (where(b, x, x) is x), and a relu on the path to the output.

With bugs planted in both log1p and relu, fp64 accuracy should blame relu (the only bug
the output sees) and strict accuracy log1p (it also compares the bool mask).
"""
import torch


class Log1pReluWhere(torch.nn.Module):
    def forward(self, x):
        y = torch.log1p(x)
        b = y > 0
        b = torch.logical_not(b)
        b = torch.logical_not(b)
        x = torch.relu(x)
        return torch.where(b, x, x)


def make_model():
    return Log1pReluWhere()


def example_inputs():
    return (torch.randn(20),)
