"""A row-wise MLP exported with a dynamic batch dimension (2..64)."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(12, 24)
        self.fc2 = torch.nn.Linear(24, 6)

    def forward(self, x):
        return torch.softmax(self.fc2(F.silu(self.fc1(x))), dim=-1) * x.shape[0]


def make_model():
    return M()


def example_inputs():
    return (torch.randn(8, 12),)


def dynamic_shapes():
    return ({0: torch.export.Dim("batch", min=2, max=64)},)
