"""A tabular price regressor: standardised features, two ReLU hidden layers, one output.

The model file contract of aoti_harness: make_model() returns the nn.Module and
example_inputs() returns the tuple of inputs; both run after torch.manual_seed.
"""
import torch

FEATURES = 16


class PriceRegressor(torch.nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        # Feature statistics from the training set, kept with the model as buffers.
        self.register_buffer("mean", torch.linspace(-1.0, 1.0, FEATURES))
        self.register_buffer("std", torch.linspace(0.5, 2.0, FEATURES))
        self.hidden1 = torch.nn.Linear(FEATURES, hidden)
        self.hidden2 = torch.nn.Linear(hidden, hidden)
        self.out = torch.nn.Linear(hidden, 1)

    def forward(self, features):
        x = (features - self.mean) / self.std
        x = torch.relu(self.hidden1(x))
        x = torch.relu(self.hidden2(x)) + x
        return self.out(x).squeeze(-1)


def make_model():
    return PriceRegressor()


def example_inputs():
    return (torch.randn(32, FEATURES),)
