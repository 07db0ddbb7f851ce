"""An MLP block (over 20 nodes) with a C++ custom op in the middle that writes through
a null pointer when AOTI_TEST_NULL_DEREF=1 (the reducer test arms it in the runner only).
Needs //testdata/custom_ops:test_ops_for_python.so."""
import torch
import torch.nn.functional as F


class CrashBlock(torch.nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.ln = torch.nn.LayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, 2 * dim)
        self.fc2 = torch.nn.Linear(2 * dim, dim)
        self.fc3 = torch.nn.Linear(dim, dim)
        self.fc4 = torch.nn.Linear(dim, dim)
        self.fc5 = torch.nn.Linear(dim, dim)
        self.fc6 = torch.nn.Linear(dim, dim)

    def forward(self, x):
        h = F.gelu(self.fc1(self.ln(x)))
        h = self.fc2(h) + x
        h = torch.ops.aoti_test.null_deref(torch.sigmoid(h) * 2.0)
        h = torch.tanh(self.fc3(h)) + h
        h = torch.softmax(self.fc4(h), dim=-1)
        h = F.silu(self.fc5(h)) * torch.sigmoid(self.fc6(h))
        return h.sum(dim=0) - h.mean(dim=0)


def make_model():
    return CrashBlock()


def example_inputs():
    return (torch.randn(6, 16),)
