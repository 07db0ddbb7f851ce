"""T5-like encoder-decoder (transformers' T5ForConditionalGeneration): relative position
buckets (log, min, where), RMS layer norm, ReLU feed-forward by default. Small random config.

model_kwargs: act ("relu" default, as T5 v1; "gelu" for the gated-gelu variant), head ("log1p").
"""
import torch
import transformers

from hf_output import FirstOutput


def make_model(act="relu", head=""):
    ff = "relu" if act == "relu" else "gated-gelu"
    cfg = transformers.T5Config(vocab_size=128, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
                                num_heads=4, relative_attention_num_buckets=8, feed_forward_proj=ff,
                                decoder_start_token_id=0, pad_token_id=0)
    return FirstOutput(transformers.T5ForConditionalGeneration(cfg), ["input_ids", "decoder_input_ids"], head,
                       use_cache=False)


def example_inputs():
    return torch.randint(0, 128, (2, 12)), torch.randint(0, 128, (2, 8))
