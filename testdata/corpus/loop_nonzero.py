"""A while_loop whose body makes a data-dependent size anew in each iteration (a boolean
mask and nonzero over a state that changes): torch binds the body's unbacked sizes per
iteration, so the counts differ from one iteration to the next."""
import torch
from torch._higher_order_ops.while_loop import while_loop


class LoopNonzero(torch.nn.Module):
    def forward(self, x, steps):
        def cond(i, h, total):
            return i < steps

        def body(i, h, total):
            kept = h[h > 0]                  # a size made anew each iteration
            idx = torch.nonzero(h > 0.5)     # and another
            shift = kept.sum() - idx.shape[0] * 0.25
            return i + 1, torch.sin(h * 2.0 + shift * 0.1), total + kept.numel()

        start = (torch.zeros((), dtype=torch.int64), x, torch.zeros((), dtype=torch.int64))
        i, h, total = while_loop(cond, body, start)
        return h, total


def make_model():
    return LoopNonzero()


def example_inputs():
    torch.manual_seed(0)
    return torch.randn(40), torch.tensor(3)
