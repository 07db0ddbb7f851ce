"""while_loop over a layer: an int64 counter and a hidden state carried, the bound and the
layer's parameters as additional inputs; decoder-style repeated application."""
import torch
from torch._higher_order_ops.while_loop import while_loop


class WhileLoopLayer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x, steps):
        def cond(i, h):
            return i < steps

        def body(i, h):
            return i + 1, torch.tanh(self.lin(h)) + h

        i, h = while_loop(cond, body, (torch.zeros((), dtype=torch.int64), x))
        return h * 2, i


def make_model():
    return WhileLoopLayer()


def example_inputs():
    return (torch.randn(3, 8), torch.tensor(3))
