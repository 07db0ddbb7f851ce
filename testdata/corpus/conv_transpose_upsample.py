"""ConvTranspose2d, nearest and bilinear interpolation, max pool 2d."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.ConvTranspose2d(3, 4, 2, stride=2)

    def forward(self, x):
        y = self.up(x)
        return (F.interpolate(y, scale_factor=2, mode="nearest"),
                F.interpolate(x, size=(9, 9), mode="bilinear", align_corners=False),
                F.max_pool2d(y, 2))


def make_model():
    return M()


def example_inputs():
    return (torch.randn(1, 3, 6, 6),)
