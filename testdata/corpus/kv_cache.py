"""State written in forward: a key/value cache filled by index_copy_ at a position held in
a buffer, and a step counter, as a decoder's cache is."""
import torch


class KvCache(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.k = torch.nn.Linear(8, 8)
        self.register_buffer("cache", torch.zeros(6, 8))
        self.register_buffer("pos", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.cache.index_copy_(0, self.pos.reshape(1), self.k(x))
        self.pos.add_(1)
        attn = torch.softmax(x @ self.cache.t(), dim=-1)
        return attn @ self.cache, self.pos * 1


def make_model():
    return KvCache()


def example_inputs():
    return (torch.randn(1, 8),)
