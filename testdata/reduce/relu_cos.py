"""Upstream's minifier smoke case: relu then cos on a 20x20 input (2 nodes)."""
import torch


class ReluCos(torch.nn.Module):
    def forward(self, x):
        return torch.cos(torch.relu(x))


def make_model():
    return ReluCos()


def example_inputs():
    return (torch.randn(20, 20),)
