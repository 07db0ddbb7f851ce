"""A program whose float64 run cannot work: it reinterprets float32 bits as int32 and
reshapes them to a fixed size, which float64 bits (twice as many int32 words) do not fit.
The check falls back to eager as the reference, as upstream's same_two_models does."""
import torch


class Fp64Fallback(torch.nn.Module):
    def forward(self, x):
        bits = x.view(torch.int32).reshape(32)
        return (bits & 0xFFFF).to(torch.float32) / 65536.0 + x.reshape(32)


def make_model():
    return Fp64Fallback()


def example_inputs():
    return (torch.randn(4, 8),)
