"""GPT-2-like decoder (transformers' GPT2LMHeadModel), small random config.

model_kwargs: act ("gelu_new" default, "relu"), head ("log1p").
"""
import torch
import transformers


class Wrapped(torch.nn.Module):
    def __init__(self, m, head):
        super().__init__()
        self.m, self.head = m, head

    def forward(self, input_ids):
        logits = self.m(input_ids=input_ids, use_cache=False, return_dict=False)[0]
        return torch.log1p(logits.softmax(-1)) if self.head == "log1p" else logits


def make_model(act="gelu_new", head=""):
    cfg = transformers.GPT2Config(vocab_size=128, n_positions=64, n_embd=32, n_layer=2, n_head=4,
                                  activation_function=act)
    return Wrapped(transformers.GPT2LMHeadModel(cfg), head)


def example_inputs():
    return (torch.randint(0, 128, (2, 16)),)
