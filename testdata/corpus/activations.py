"""gelu (both approximations), silu, mish, hardswish, elu, leaky_relu, softplus."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def forward(self, x):
        return (F.gelu(x), F.gelu(x, approximate="tanh"), F.silu(x), F.mish(x), F.hardswish(x),
                F.elu(x), F.leaky_relu(x, 0.2), F.softplus(x))


def make_model():
    return M()


def example_inputs():
    return (torch.randn(4, 33) * 3,)
