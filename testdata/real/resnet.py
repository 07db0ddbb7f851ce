"""ResNet image classifier (transformers' ResNetForImageClassification, basic blocks, ReLU,
batch norm, max pooling), small random config. Returns transformers'
ImageClassifierOutputWithNoAttention, a dict. The team's pipeline (ship_resnet.py) packages
it itself; the harness tests what that pipeline ships.
"""
import torch
import transformers


def make_model():
    cfg = transformers.ResNetConfig(num_channels=3, embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1],
                                    layer_type="basic", hidden_act="relu", num_labels=10)
    return transformers.ResNetForImageClassification(cfg)


def example_inputs():
    return ()


def example_kwargs():
    return {"pixel_values": torch.randn(2, 3, 32, 32)}
