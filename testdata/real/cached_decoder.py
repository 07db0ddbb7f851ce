"""A decoder step with state written in forward: a key/value cache filled at the position a
buffer holds (index_copy_), the position advanced (a step counter), attention over the
cache, and an MLP after it. AOTI keeps such buffers inside the loaded model, where they
persist from call to call; the harness runs every check from the package's own state.

model_kwargs: act ("gelu" default, "relu").
"""
import torch


class CachedDecoder(torch.nn.Module):
    def __init__(self, act):
        super().__init__()
        self.embed = torch.nn.Embedding(128, 32)
        self.k = torch.nn.Linear(32, 32)
        self.v = torch.nn.Linear(32, 32)
        self.q = torch.nn.Linear(32, 32)
        self.up = torch.nn.Linear(32, 64)
        self.down = torch.nn.Linear(64, 32)
        self.act = torch.nn.ReLU() if act == "relu" else torch.nn.GELU()
        self.register_buffer("keys", torch.zeros(16, 32))
        self.register_buffer("values", torch.zeros(16, 32))
        self.register_buffer("pos", torch.zeros((), dtype=torch.long))

    def forward(self, token):
        x = self.embed(token)  # [1, 32]
        at = self.pos.reshape(1)
        self.keys.index_copy_(0, at, self.k(x))
        self.values.index_copy_(0, at, self.v(x))
        self.pos.add_(1)
        att = torch.softmax(self.q(x) @ self.keys.t() / 32 ** 0.5, dim=-1)
        h = x + att @ self.values
        return h + self.down(self.act(self.up(h))), self.pos * 1


def make_model(act="gelu"):
    return CachedDecoder(act)


def example_inputs():
    return (torch.tensor([5]),)
