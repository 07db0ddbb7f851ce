"""A model whose C++ custom op (aoti_test::null_deref) writes through a null pointer
when AOTI_TEST_NULL_DEREF=1 is set (the test sets it; packaging runs without it).

Used to show that a segfault in the compiled model is an outcome the harness reports,
not the end of the test process. Needs //testdata/custom_ops:test_ops_for_python.so.
"""
import torch


class CrashOp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        return torch.relu(torch.ops.aoti_test.null_deref(h))


def make_model():
    return CrashOp()


def example_inputs():
    return (torch.randn(4, 8),)
