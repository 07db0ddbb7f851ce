"""Conv1d, max pool, average pool, batch norm 1d."""
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(4, 8, 5, padding=2)
        self.bn = torch.nn.BatchNorm1d(8)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return F.max_pool1d(y, 2), F.avg_pool1d(y, 3, stride=2)


def make_model():
    return M()


def example_inputs():
    return (torch.randn(2, 4, 20),)
