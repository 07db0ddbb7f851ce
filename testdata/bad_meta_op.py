"""A model with a custom C++ op whose meta function is wrong under dynamic shapes:
aoti_test::sized_like (testdata/custom_ops/test_ops.cc) calls x.sizes() in its Meta kernel,
and the batch is exported as dynamic, so torch.export fails. The package records the
failure; its test fails with the triage's custom_op_symint_meta diagnosis.
Needs //testdata/custom_ops:test_ops_for_python.so.
"""
import torch


class BadMetaOp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.ops.aoti_test.sized_like(self.fc(x)) * 2


def make_model():
    return BadMetaOp()


def example_inputs():
    return (torch.randn(4, 8),)


def dynamic_shapes():
    return ({0: torch.export.Dim("batch", min=2, max=64)},)
