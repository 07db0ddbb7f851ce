"""A recurrent encoder written with scan: a gated cell over the sequence (the carry its
state, the stacked outputs each step's), as state-space and RNN layers are exported. The
planted relu lands in the cell.

model_kwargs: act ("tanh" default, "relu").
"""
import torch
from torch._higher_order_ops.scan import scan


class RecurrentScan(torch.nn.Module):
    def __init__(self, act):
        super().__init__()
        self.embed = torch.nn.Embedding(128, 32)
        self.inp = torch.nn.Linear(32, 32)
        self.rec = torch.nn.Linear(32, 32)
        self.gate = torch.nn.Linear(64, 32)
        self.act = torch.relu if act == "relu" else torch.tanh
        self.head = torch.nn.Linear(32, 128)

    def forward(self, input_ids):
        xs = self.embed(input_ids).transpose(0, 1)  # time first

        def cell(state, x):
            z = torch.sigmoid(self.gate(torch.cat([state, x], -1)))
            new = z * state + (1 - z) * self.act(self.inp(x) + self.rec(state))
            return new, new.clone()

        last, ys = scan(cell, torch.zeros(input_ids.shape[0], 32), xs)
        return self.head(ys.transpose(0, 1)) + last.unsqueeze(1).sum(-1, keepdim=True)


def make_model(act="tanh"):
    return RecurrentScan(act)


def example_inputs():
    return (torch.randint(0, 128, (2, 12)),)
