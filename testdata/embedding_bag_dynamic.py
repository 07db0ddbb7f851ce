"""Integer inputs with structure, exported with dynamic sizes: flat ids and per-bag offsets
into an embedding bag, a position count into a position table, and an index into a
dimension of the dense input (index_select). dynamic_shapes_test makes inputs at every shape
point from what the program's operators require of them, and runs them in eager."""
import torch
from torch import nn
from torch.export import Dim


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(100, 8, mode="mean")
        self.pos = nn.Embedding(64, 8)

    def forward(self, dense, ids, offsets, positions, cols):
        pooled = self.bag(ids, offsets)                  # [batch, 8]
        picked = torch.index_select(dense, 1, cols)      # [batch, ncols]
        return pooled + self.pos(positions).mean(1), picked


def make_model():
    return M()


def example_inputs():
    batch = 3
    return (torch.randn(batch, 12), torch.randint(0, 100, (9,)), torch.tensor([0, 2, 5]),
            torch.arange(5).expand(batch, 5).contiguous(), torch.tensor([1, 7, 11, 3]))


def dynamic_shapes():
    batch, n = Dim("batch", min=2, max=32), Dim("ids", min=2, max=256)
    width, seq = Dim("width", min=4, max=48), Dim("seq", min=2, max=40)
    return ({0: batch, 1: width}, {0: n}, {0: batch}, {0: batch, 1: seq}, None)
