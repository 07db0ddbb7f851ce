"""Llama-like decoder (transformers' LlamaForCausalLM): rotary embeddings (the
non-persistent buffer rotary_emb.inv_freq), RMSNorm, grouped-query attention (4 query
heads, 2 key/value heads), SiLU-gated MLP. Small random config.

model_kwargs: act ("silu" default, "relu"), head ("log1p").
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


def make_model(act="silu", head=""):
    cfg = transformers.LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                   hidden_act=act)
    return Wrapped(transformers.LlamaForCausalLM(cfg), head)


def example_inputs():
    return (torch.randint(0, 128, (2, 16)),)
