"""A GPT-2 decoder (transformers' GPT2LMHeadModel) with weights of a real model's size:
n_embd 768, 6 layers, a vocabulary of 8192 (about 49M parameters, 200 MB in float32), on a
short sequence. For localize_first_bench: the cost that grows with the weights."""
import torch
import transformers


class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False).logits


def make_model():
    cfg = transformers.GPT2Config(vocab_size=8192, n_positions=64, n_embd=768, n_layer=6, n_head=12,
                                  bos_token_id=0, eos_token_id=0)
    return Logits(transformers.GPT2LMHeadModel(cfg))


def example_inputs():
    return (torch.randint(0, 8192, (1, 8)),)
