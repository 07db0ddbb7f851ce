"""GroupNorm and InstanceNorm on a conv feature map."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.gn = torch.nn.GroupNorm(4, 8)
        self.inorm = torch.nn.InstanceNorm2d(8, affine=True)

    def forward(self, x):
        y = self.conv(x)
        return self.gn(y), self.inorm(y)


def make_model():
    return M()


def example_inputs():
    return (torch.randn(2, 3, 10, 10),)
