"""A looped decoder: transformers' LlamaMLP (small random config) applied to the hidden
state a data-given number of times in a while_loop, as a universal transformer or a
decoding loop applies one layer again and again. The planted relu lands in the loop's body.

model_kwargs: act ("silu" default, "relu").
"""
import torch
import transformers
from torch._higher_order_ops.while_loop import while_loop


class LoopedDecoder(torch.nn.Module):
    def __init__(self, act):
        super().__init__()
        cfg = transformers.LlamaConfig(hidden_size=32, intermediate_size=64, hidden_act=act)
        self.embed = torch.nn.Embedding(128, 32)
        self.norm = transformers.models.llama.modeling_llama.LlamaRMSNorm(32)
        self.mlp = transformers.models.llama.modeling_llama.LlamaMLP(cfg)
        self.head = torch.nn.Linear(32, 128)

    def forward(self, input_ids, steps):
        def more(i, h):
            return i < steps

        def step(i, h):
            return i + 1, h + self.mlp(self.norm(h))

        _, h = while_loop(more, step, (torch.zeros((), dtype=torch.int64), self.embed(input_ids)))
        return self.head(h)


def make_model(act="silu"):
    return LoopedDecoder(act)


def example_inputs():
    return torch.randint(0, 128, (2, 16)), torch.tensor(3)
