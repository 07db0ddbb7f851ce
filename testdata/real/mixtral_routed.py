"""Mixture-of-experts decoder with data-dependent routing (transformers' MixtralForCausalLM,
small random config): each expert runs on the tokens routed to it (moe_dispatch.py's
token_dispatch, registered in transformers' experts interface), so every expert's token
count is a data-dependent size (unbacked symbols u0..u7 in the exported program).

model_kwargs: act ("silu" default, "relu").
"""
import torch
import transformers

import moe_dispatch  # noqa: F401  (registers "token_dispatch")
from hf_output import FirstOutput


def make_model(act="silu"):
    cfg = transformers.MixtralConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                     num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
                                     num_experts_per_tok=2, max_position_embeddings=64, sliding_window=8,
                                     hidden_act=act, experts_implementation="token_dispatch")
    return FirstOutput(transformers.MixtralForCausalLM(cfg), ["input_ids"], use_cache=False)


def example_inputs():
    return (torch.randint(0, 128, (2, 16)),)
