"""A model returning several tensors of different dtypes and shapes."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(10, 4)

    def forward(self, x):
        logits = self.fc(x)
        probs = torch.softmax(logits, dim=-1)
        return logits, probs, probs.argmax(dim=-1), probs.max(dim=-1).values


def make_model():
    return M()


def example_inputs():
    return (torch.randn(6, 10),)
