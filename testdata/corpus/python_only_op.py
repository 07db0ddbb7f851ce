"""A model calling a custom operator written only in Python (torch.library.custom_op, as
transformers' grouped_mm_fallback is): AOTI compiles it, and the compiled model calls back
into Python for that operator, so no C++ process (a C++ deployment, the harness's runner)
can run it. The harness says so before anything runs.
"""
import torch


@torch.library.custom_op("corpus_py::soft_clip", mutates_args=())
def soft_clip(x: torch.Tensor, limit: float) -> torch.Tensor:
    return limit * torch.tanh(x / limit)


@soft_clip.register_fake
def _(x, limit):
    return torch.empty_like(x)


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(torch.ops.corpus_py.soft_clip(self.fc(x), 2.0))


def make_model():
    return M()


def example_inputs():
    return (torch.randn(4, 8),)
