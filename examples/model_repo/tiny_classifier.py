"""A tiny token classifier: embedding, a pre-norm residual MLP block, mean pooling, head.

The model file contract of aoti_harness: make_model() returns the nn.Module and
example_inputs() returns the tuple of inputs; both run after torch.manual_seed.
"""
import torch


class TinyClassifier(torch.nn.Module):
    def __init__(self, vocab=100, dim=32, classes=4):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.norm = torch.nn.LayerNorm(dim)
        self.up = torch.nn.Linear(dim, 4 * dim)
        self.down = torch.nn.Linear(4 * dim, dim)
        self.head = torch.nn.Linear(dim, classes)

    def forward(self, tokens):
        h = self.embed(tokens)
        h = h + self.down(torch.nn.functional.gelu(self.up(self.norm(h))))
        return self.head(h.mean(dim=1))


def make_model():
    return TinyClassifier()


def example_inputs():
    return (torch.randint(0, 100, (2, 12)),)
