"""FirstOutput: a transformers model as a model file hands it to the harness. It calls the
model with named inputs and return_dict=False and returns the first output (the logits or
the hidden states), optionally through a log1p(softmax) head, which gives the planted
log1p bug an op to change."""
import torch


class FirstOutput(torch.nn.Module):
    def __init__(self, model, input_names, head="", **fixed_kwargs):
        super().__init__()
        if head not in ("", "log1p"):
            raise ValueError(f"head={head!r}: expected '' or 'log1p'")
        self.model, self.input_names, self.head, self.fixed_kwargs = model, tuple(input_names), head, fixed_kwargs

    def forward(self, *inputs):
        out = self.model(**dict(zip(self.input_names, inputs)), **self.fixed_kwargs, return_dict=False)[0]
        return torch.log1p(out.softmax(-1)) if self.head == "log1p" else out
