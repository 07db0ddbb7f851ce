"""view, reshape, permute, expand, transpose, unsqueeze, squeeze, flatten, contiguous."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def forward(self, x):
        a = x.view(6, 20).t().contiguous()
        b = x.permute(3, 0, 1, 2).reshape(5, -1)
        c = x[:, :1].expand(2, 3, 4, 5).unsqueeze(0).squeeze(0)
        d = x.transpose(0, 2).flatten(1)
        return a, b, c * 2, d + 1


def make_model():
    return M()


def example_inputs():
    return (torch.randn(2, 3, 4, 5),)
