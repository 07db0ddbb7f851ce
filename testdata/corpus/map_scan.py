"""map over the first dimension and a scan (a running sum with its stacked outputs)."""
import torch
from torch._higher_order_ops.map import map as hop_map
from torch._higher_order_ops.scan import scan


class MapScan(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(6))

    def forward(self, xs):
        def body(x, w):
            return torch.relu(x * w) + 1

        mapped = hop_map(body, xs, self.w)

        def combine(carry, x):
            nxt = carry * 0.5 + x
            return nxt, torch.sin(nxt)

        last, ys = scan(combine, torch.zeros(6), mapped)
        return last, ys


def make_model():
    return MapScan()


def example_inputs():
    return (torch.randn(5, 6),)
