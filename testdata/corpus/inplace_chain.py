"""An in-place chain on an intermediate: h is computed, then changed by relu_, mul_ and
add_ in turn, and earlier readers of h must see it as it was when they read it."""
import torch


class InplaceChain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        before = h * 3.0
        h.relu_()
        middle = h.sum(-1, keepdim=True)
        h.mul_(2.0)
        h.add_(before)
        return h, middle


def make_model():
    return InplaceChain()


def example_inputs():
    return (torch.randn(4, 8),)
