"""sum, mean, amax, argmax, var, std, logsumexp, prod over various dims."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def forward(self, x):
        return (x.sum(), x.mean(dim=1), x.amax(dim=(0, 2)), x.argmax(dim=-1),
                x.var(dim=0, unbiased=True), x.std(dim=2), torch.logsumexp(x, dim=1), x.prod(dim=1))


def make_model():
    return M()


def example_inputs():
    return (torch.randn(3, 5, 7),)
