"""BERT-like encoder (transformers' BertModel), small random config, nothing downloaded.

Has a non-persistent buffer (embeddings.position_ids) and token_type_ids buffer.
model_kwargs: act ("gelu" default; "relu" for the planted relu bugs), head ("log1p"
adds log1p(softmax) over the hidden states, for the planted log1p bug).
"""
import torch
import transformers


class Wrapped(torch.nn.Module):
    def __init__(self, m, head):
        super().__init__()
        self.m, self.head = m, head

    def forward(self, input_ids, attention_mask):
        h = self.m(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)[0]
        return torch.log1p(h.softmax(-1)) if self.head == "log1p" else h


def make_model(act="gelu", head=""):
    cfg = transformers.BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=64, max_position_embeddings=64, hidden_act=act)
    return Wrapped(transformers.BertModel(cfg, add_pooling_layer=False), head)


def example_inputs():
    ids = torch.randint(0, 128, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.long)
    mask[1, 12:] = 0
    return ids, mask
