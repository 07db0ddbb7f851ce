"""A stack of 12 pre-norm transformer blocks (about 320 nodes) whose MLPs use GELU, except
block 6 of 12, which uses ReLU: with a planted relu bug, the one buggy node sits deep in
the middle of the graph. model_kwargs: relu_block (which block uses ReLU; -1: none)."""
import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, dim, heads, relu):
        super().__init__()
        self.heads, self.relu = heads, relu
        self.ln1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.ln2 = torch.nn.LayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, 2 * dim)
        self.fc2 = torch.nn.Linear(2 * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = torch.softmax(q @ k.transpose(-1, -2) * (d // self.heads) ** -0.5, dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
        h = self.fc1(self.ln2(x))
        h = torch.relu(h) if self.relu else F.gelu(h)
        return x + self.fc2(h)


class DeepStack(torch.nn.Module):
    def __init__(self, blocks=12, dim=32, heads=4, relu_block=6):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block(dim, heads, i == relu_block) for i in range(blocks))
        self.out = torch.nn.LayerNorm(dim)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.out(x)


def make_model(relu_block=6):
    return DeepStack(relu_block=relu_block)


def example_inputs():
    return (torch.randn(2, 8, 32),)
