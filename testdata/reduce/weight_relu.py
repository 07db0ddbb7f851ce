"""A block whose planted relu bug is in a relu of a weight (relu(w) as a matrix): the
minimal repro keeps the weight, so the reducer's random weights have something to replace."""
import torch


class WeightRelu(torch.nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.fc = torch.nn.Linear(dim, dim)
        self.w = torch.nn.Parameter(torch.randn(dim, dim) * 0.5)

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        return h @ torch.relu(self.w) + h.sum(dim=-1, keepdim=True)


def make_model():
    return WeightRelu()


def example_inputs():
    return (torch.randn(8, 16),)
