"""int64 arithmetic: add, mul, floor_divide, remainder, bitwise and/xor, shifts, abs."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def forward(self, a, b):
        return (a + b, a * b, torch.floor_divide(a, b), torch.remainder(a, b), a & b, a ^ b,
                a << 2, (a - b).abs(), (a * 3).sum(dim=0))


def make_model():
    return M()


def example_inputs():
    return (torch.randint(-50, 50, (4, 6)), torch.randint(1, 9, (4, 6)))
