"""RMS norm written out, F.normalize, cosine similarity."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(16) + 0.5)

    def forward(self, x, y):
        rms = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight
        return rms, F.normalize(x, dim=-1), F.cosine_similarity(x, y, dim=-1)


def make_model():
    return M()


def example_inputs():
    return (torch.randn(3, 16), torch.randn(3, 16))
