"""Mixture-of-experts decoder (transformers' MixtralForCausalLM): a router with top-2 of
4 experts (topk, softmax, batched expert matmuls), sliding-window attention,
rotary embeddings, grouped-query attention. Small random config.

model_kwargs: act ("silu" default, "relu"), head ("log1p"), experts ("batched_mm" default;
"default": transformers' own default, grouped_mm, whose CPU path is a custom op written only
in Python, transformers::grouped_mm_fallback).
"""
import torch
import transformers

from hf_output import FirstOutput


def make_model(act="silu", head="", experts="batched_mm"):
    chosen = {} if experts == "default" else {"experts_implementation": experts}
    cfg = transformers.MixtralConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                     num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
                                     num_experts_per_tok=2, max_position_embeddings=64, sliding_window=8,
                                     hidden_act=act, **chosen)
    return FirstOutput(transformers.MixtralForCausalLM(cfg), ["input_ids"], head, use_cache=False)


def example_inputs():
    return (torch.randint(0, 128, (2, 16)),)
