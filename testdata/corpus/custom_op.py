"""A model calling a C++ custom operator (aoti_test::scaled_add, TORCH_LIBRARY).

The packaging rule loads the operator's shared library first (op_libraries).
"""
import torch


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x, y):
        return torch.relu(torch.ops.aoti_test.scaled_add(self.fc(x), y, 0.5))


def make_model():
    return M()


def example_inputs():
    return (torch.randn(4, 8), torch.randn(4, 8))
