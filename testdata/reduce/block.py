"""A pre-norm transformer block with a relu MLP and a log1p-compressed gate (about 30
nodes): the reducer's planted-bug scenarios cut it down to the buggy node."""
import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.ln2 = torch.nn.LayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, 2 * dim)
        self.fc2 = torch.nn.Linear(2 * dim, dim)
        self.gate = torch.nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = torch.softmax(q @ k.transpose(-1, -2) * (d // self.heads) ** -0.5, dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
        h = self.fc2(torch.relu(self.fc1(self.ln2(x))))
        g = torch.log1p(self.gate(x).abs())
        return x + h * g


def make_model():
    return Block()


def example_inputs():
    return (torch.randn(2, 8, 32),)
