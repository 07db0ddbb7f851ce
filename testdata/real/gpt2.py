"""GPT-2-like decoder (transformers' GPT2LMHeadModel), small random config.

model_kwargs: act ("gelu_new" default, "relu"), head ("log1p").
"""
import torch
import transformers

from hf_output import FirstOutput


def make_model(act="gelu_new", head=""):
    cfg = transformers.GPT2Config(vocab_size=128, n_positions=64, n_embd=32, n_layer=2, n_head=4,
                                  activation_function=act, bos_token_id=0, eos_token_id=0)
    return FirstOutput(transformers.GPT2LMHeadModel(cfg), ["input_ids"], head, use_cache=False)


def example_inputs():
    return (torch.randint(0, 128, (2, 16)),)
