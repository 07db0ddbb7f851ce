"""Vision transformer (transformers' ViTForImageClassification): conv patch embedding,
class token, learned position embeddings, GELU MLP. Small random config.

model_kwargs: act ("gelu" default, "relu"), head ("log1p").
"""
import torch
import transformers

from hf_output import FirstOutput


def make_model(act="gelu", head=""):
    cfg = transformers.ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2,
                                 num_attention_heads=4, intermediate_size=64, num_labels=10, hidden_act=act)
    return FirstOutput(transformers.ViTForImageClassification(cfg), ["pixel_values"], head)


def example_inputs():
    return (torch.randn(2, 3, 32, 32),)
