"""Upstream's offload-to-disk smoke case: sin, sin, cos, relu on a 20x20 input."""
import torch


class SinCosRelu(torch.nn.Module):
    def forward(self, x):
        return torch.relu(torch.cos(torch.sin(torch.sin(x))))


def make_model():
    return SinCosRelu()


def example_inputs():
    return (torch.randn(20, 20),)
