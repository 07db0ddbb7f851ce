"""Layer norm over the last dim, with affine weights, then a linear."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(24)
        self.fc = torch.nn.Linear(24, 24)

    def forward(self, x):
        return self.fc(self.ln(x))


def make_model():
    return M()


def example_inputs():
    return (torch.randn(4, 6, 24),)
