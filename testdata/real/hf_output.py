"""FirstOutput: a transformers model as a model file hands it to the harness. It calls the
model with named inputs and return_dict=False and returns the first output (the logits or
the hidden states), optionally through a head: "log1p" (log1p(softmax), which gives the
planted log1p bug an op to change) or "noise" (adds 0.5 * randn_like: a random model, as a
sampling step makes one)."""
import torch


class FirstOutput(torch.nn.Module):
    def __init__(self, model, input_names, head="", **fixed_kwargs):
        super().__init__()
        if head not in ("", "log1p", "noise"):
            raise ValueError(f"head={head!r}: expected '', 'log1p' or 'noise'")
        self.model, self.input_names, self.head, self.fixed_kwargs = model, tuple(input_names), head, fixed_kwargs

    def forward(self, *inputs):
        out = self.model(**dict(zip(self.input_names, inputs)), **self.fixed_kwargs, return_dict=False)[0]
        if self.head == "noise":
            return out + 0.5 * torch.randn_like(out)
        return torch.log1p(out.softmax(-1)) if self.head == "log1p" else out
