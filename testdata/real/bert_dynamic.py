"""BERT (bert.py) exported with a dynamic batch (2..8) and sequence length (2..64): the
generic test checks it at its sample shape and across both ranges (every dimension at its
minimum, where batch and sequence are equal, and at its maximum)."""
import torch

from bert import example_inputs, make_model  # noqa: F401 (the model file contract)


def dynamic_shapes():
    batch = torch.export.Dim("batch", min=2, max=8)
    seq = torch.export.Dim("seq", min=2, max=64)
    # FirstOutput takes its inputs as *inputs: one spec for the tuple of them.
    return (({0: batch, 1: seq}, {0: batch, 1: seq}),)
