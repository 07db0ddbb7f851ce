"""exp, log, sqrt, rsqrt, sin, cos, tanh, sigmoid, pow, clamp, reciprocal, erf."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def forward(self, x):
        p = x.abs() + 0.1
        return (p.exp(), p.log(), p.sqrt(), p.rsqrt(), x.sin() + x.cos(), x.tanh(), x.sigmoid(),
                p.pow(1.7), x.clamp(-0.5, 0.5), p.reciprocal(), torch.erf(x), torch.log1p(p))


def make_model():
    return M()


def example_inputs():
    return (torch.randn(5, 9),)
