"""A torch.autocast("cpu", bfloat16) region (wrap_with_autocast in the exported program):
the linear runs in bfloat16 under it, the rest in float32; and an enable_grad region
(wrap_with_set_grad_enabled)."""
import torch


class AutocastRegion(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)
        self.out = torch.nn.Linear(16, 4)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = torch.relu(self.lin(x))
        with torch.enable_grad():
            g = h.float() * 2
        return self.out(g).softmax(-1)


def make_model():
    return AutocastRegion()


def example_inputs():
    return (torch.randn(4, 16),)
