"""Two buffers that share one storage (b is a view of a), and a forward that mutates a in
place: the change must show through b, in every run."""
import torch


class TiedBufferMutation(torch.nn.Module):
    def __init__(self):
        super().__init__()
        base = torch.zeros(2, 8)
        self.register_buffer("a", base)
        self.register_buffer("b", base[0])

    def forward(self, x):
        self.a.add_(x.mean(0))
        return x + self.b


def make_model():
    return TiedBufferMutation()


def example_inputs():
    return (torch.randn(4, 8),)
