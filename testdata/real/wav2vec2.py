"""Wav2Vec2 for CTC (transformers' Wav2Vec2ForCTC): a convolutional feature encoder over the
raw waveform (group norm, weight-normed positional convolution), then a transformer.
Small random config. Called with a keyword input (input_values=...), it returns
transformers' CausalLMOutput with the hidden states of every layer: a dict whose
hidden_states entry is a tuple, so the outputs nest.
"""
import torch
import transformers


def make_model():
    cfg = transformers.Wav2Vec2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                      intermediate_size=64, conv_dim=(16, 16), conv_stride=(5, 2),
                                      conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                                      num_conv_pos_embedding_groups=4, vocab_size=20, output_hidden_states=True)
    return transformers.Wav2Vec2ForCTC(cfg)


def example_inputs():
    return ()


def example_kwargs():
    return {"input_values": torch.randn(2, 400)}
