"""A small MLP block exported with a dynamic batch (2..32). The batch size is read as a
symbolic int and feeds the relu's input (h * b), so a cut next to the relu is a cut at a
symbolic value: the reducer's dynamic-shapes scenario."""
import torch
import torch.nn.functional as F


class DynamicBlock(torch.nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.ln = torch.nn.LayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, 2 * dim)
        self.fc2 = torch.nn.Linear(2 * dim, dim)

    def forward(self, x):
        b = x.shape[0]
        h = self.fc1(self.ln(x - x.mean(0)))
        h = torch.relu(h * b)
        h = self.fc2(F.silu(h)).reshape(b, -1)
        return torch.softmax(h, dim=-1) * b


def make_model():
    return DynamicBlock()


def example_inputs():
    return (torch.randn(4, 6, 16),)


def dynamic_shapes():
    return ({0: torch.export.Dim("batch", min=2, max=32)},)
