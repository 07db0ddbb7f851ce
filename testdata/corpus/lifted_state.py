"""Every kind of lifted input torch.export emits, each read from where the archive keeps it:
parameters and a persistent buffer (data/weights/), a non-persistent buffer, a tensor
attribute (a tensor constant) and a tensor literal made in forward (a lifted constant),
all three in data/constants/."""
import torch


class LiftedState(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.register_buffer("scale", torch.linspace(0.5, 1.5, 8))
        self.register_buffer("position_ids", torch.arange(8).unsqueeze(0), persistent=False)
        self.register_buffer("inv_freq", 1.0 / (100.0 ** (torch.arange(0, 8, 2).float() / 8)), persistent=False)
        self.offset = torch.full((8,), 0.25)  # a plain tensor attribute: a tensor constant

    def forward(self, x):
        angles = self.position_ids.float().transpose(0, 1) * self.inv_freq.repeat(2).unsqueeze(0)
        y = self.fc(x) * self.scale + self.offset + angles.sin().sum(0)
        return y + torch.tensor([1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 0.0, 3.0])


def make_model():
    return LiftedState()


def example_inputs():
    return (torch.randn(4, 8),)
