"""An MLP in float16 end to end."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def make_model():
    return M().half()


def example_inputs():
    return (torch.randn(4, 16, dtype=torch.float16),)
