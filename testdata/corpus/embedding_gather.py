"""Embedding lookup, gather along a dim, index_select."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(50, 12)

    def forward(self, tokens, pick):
        e = self.emb(tokens)                         # [2, 7, 12]
        g = torch.gather(e, 2, pick)                 # [2, 7, 3]
        s = torch.index_select(e, 1, tokens[0, :3] % 7)  # [2, 3, 12]
        return g, s


def make_model():
    return M()


def example_inputs():
    return (torch.randint(0, 50, (2, 7)), torch.randint(0, 12, (2, 7, 3)))
