"""A model that mutates its user inputs in place (x.add_, y.mul_): torch.export's default
IR keeps the in-place ops on the inputs. Each run (compiled, eager, fp64) must start from
the inputs as given, and the caller's tensors must stay as they were."""
import torch


class InputMutation(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x, y):
        x.add_(1.0)
        y.mul_(2.0)
        return self.fc(x) * y


def make_model():
    return InputMutation()


def example_inputs():
    return torch.randn(4, 8), torch.randn(4, 8)
