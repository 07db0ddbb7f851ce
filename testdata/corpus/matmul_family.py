"""matmul, bmm, baddbmm, einsum, outer, mv."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def forward(self, a, b, v):
        return (a @ b, torch.bmm(a, b), torch.baddbmm(a[:, :, :3], a, b[:, :, :3], alpha=0.5),
                torch.einsum("bij,bjk->bik", a, b), torch.outer(v, v), torch.mv(a[0], v[:5]))


def make_model():
    return M()


def example_inputs():
    return (torch.randn(3, 4, 5), torch.randn(3, 5, 6), torch.randn(5))
