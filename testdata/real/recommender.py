"""A recommender as it is served: three embedding-bag tables (sum pooling) fed by flat ids
and per-bag offsets, a dense feature projection, and a small MLP on top. Exported with a
dynamic batch and dynamic id counts per table, so the harness checks it at every shape
point: there the ids must stay within each table, and the offsets must start at 0, rise,
and stay within their ids' count, or eager refuses the inputs as the compiled model does.
Two points carry the team's own inputs (shape_inputs()): "max" at full batch with every
table's largest id in use, and "empty_bags", where some users have no ids in a table (an
offset repeated), which the harness never makes.
"""
import torch
from torch import nn
from torch.export import Dim

TABLES = [(1000, 16), (500, 16), (200, 16)]
DENSE = 8


class Recommender(nn.Module):
    def __init__(self, act="gelu"):
        super().__init__()
        self.bags = nn.ModuleList([nn.EmbeddingBag(n, d, mode="sum") for n, d in TABLES])
        self.dense = nn.Linear(DENSE, 16)
        self.top = nn.Sequential(nn.Linear(16 * (1 + len(TABLES)), 32), nn.ReLU() if act == "relu" else nn.GELU(),
                                 nn.Linear(32, 1))

    def forward(self, dense, ids0, offsets0, ids1, offsets1, ids2, offsets2):
        pooled = [bag(ids, offsets) for bag, ids, offsets in
                  zip(self.bags, (ids0, ids1, ids2), (offsets0, offsets1, offsets2))]
        return torch.sigmoid(self.top(torch.cat([self.dense(dense)] + pooled, dim=1)))


def make_model(act="gelu"):
    return Recommender(act)


def _bags(rows, counts):
    ids = torch.randint(0, rows, (sum(counts),))
    offsets = torch.tensor([0] + list(torch.tensor(counts).cumsum(0)[:-1]))
    return ids, offsets


def example_inputs():
    batch = 4
    out = [torch.randn(batch, DENSE)]
    for (rows, _), counts in zip(TABLES, ([3, 1, 4, 2], [2, 2, 2, 5], [1, 6, 1, 3])):
        out += list(_bags(rows, counts))
    return tuple(out)


def dynamic_shapes():
    batch = Dim("batch", min=2, max=64)
    ids = [Dim(f"ids{k}", min=2, max=2048) for k in range(len(TABLES))]
    return ({0: batch}, {0: ids[0]}, {0: batch}, {0: ids[1]}, {0: batch}, {0: ids[2]}, {0: batch})


def shape_inputs():
    def point(batch, counts):
        out = [torch.randn(batch, DENSE)]
        for (rows, _), c in zip(TABLES, counts):
            ids, offsets = _bags(rows, c)
            ids[-1] = rows - 1  # the table's last row in use
            out += [ids, offsets]
        return tuple(out)

    return {
        "max": point(64, [[32] * 64, [16] * 64, [8] * 64]),
        "empty_bags": point(6, [[0, 3, 0, 2, 0, 1], [4, 0, 0, 0, 0, 1], [1, 1, 0, 1, 1, 0]]),
    }
