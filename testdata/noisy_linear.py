"""A linear layer with noise drawn in forward (randn_like): a random model, checked seeded
with fallback_random, as a team tests a model with dropout or sampling."""
import torch


class NoisyLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)

    def forward(self, x):
        y = self.fc(x)
        return y + 0.5 * torch.randn_like(y)


def make_model():
    return NoisyLinear()


def example_inputs():
    return (torch.randn(4, 16),)
