"""BERT-like encoder (transformers' BertModel), small random config, nothing downloaded.

Has a non-persistent buffer (embeddings.position_ids) and token_type_ids buffer.
model_kwargs: act ("gelu" default; "relu" for the planted relu bugs), head ("log1p"
adds log1p(softmax) over the hidden states, for the planted log1p bug).
"""
import torch
import transformers

from hf_output import FirstOutput


def make_model(act="gelu", head=""):
    cfg = transformers.BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=64, max_position_embeddings=64, hidden_act=act)
    return FirstOutput(transformers.BertModel(cfg, add_pooling_layer=False), ["input_ids", "attention_mask"], head)


def example_inputs():
    ids = torch.randint(0, 128, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.long)
    mask[1, 12:] = 0
    return ids, mask
