"""Data-dependent sizes: a boolean mask (h[h > 0]), nonzero, and item() checked into a
range (torch._check), each an unbacked symbol bound when it runs."""
import torch


class DataDependent(torch.nn.Module):
    def forward(self, h, k):
        kept = h[h > 0]
        idx = torch.nonzero(h > 0.5)
        n = k.item()
        torch._check(n >= 1)
        torch._check(n <= 8)
        head = h[:n]
        return kept.relu() * 2, idx.sum(), head.cos()


def make_model():
    return DataDependent()


def example_inputs():
    torch.manual_seed(0)
    return torch.randn(8), torch.tensor(3)
