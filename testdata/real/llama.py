"""Llama-like decoder (transformers' LlamaForCausalLM): rotary embeddings (the
non-persistent buffer rotary_emb.inv_freq), RMSNorm, grouped-query attention (4 query
heads, 2 key/value heads), SiLU-gated MLP. Small random config.

model_kwargs: act ("silu" default, "relu"), head ("log1p").
"""
import torch
import transformers

from hf_output import FirstOutput


def make_model(act="silu", head=""):
    cfg = transformers.LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                   hidden_act=act)
    return FirstOutput(transformers.LlamaForCausalLM(cfg), ["input_ids"], head, use_cache=False)


def example_inputs():
    return (torch.randint(0, 128, (2, 16)),)
