"""Control flow nested in control flow: a cond inside a while_loop's body (its predicate
changes from one iteration to the next), and a map inside the cond's branch."""
import torch
from torch._higher_order_ops.map import map as hop_map
from torch._higher_order_ops.while_loop import while_loop


class NestedLoopCond(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        def cond(i, h):
            return i < 4

        def body(i, h):
            def odd(h):
                return hop_map(lambda row: torch.relu(row) * 2, h)

            def even(h):
                return torch.sigmoid(self.lin(h))

            return i + 1, torch.cond(i % 2 == 1, odd, even, (h,))

        _, h = while_loop(cond, body, (torch.zeros((), dtype=torch.int64), x))
        return h


def make_model():
    return NestedLoopCond()


def example_inputs():
    return (torch.randn(3, 4),)
