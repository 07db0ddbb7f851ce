"""Mixed precision as teams write it: BERT (transformers' BertModel, small random config) run
under torch.autocast("cpu", dtype=torch.bfloat16), its pooled output read back in float32.
The exported program keeps the region as wrap_with_autocast.

model_kwargs: act ("gelu" default, "relu").
"""
import torch
import transformers


class BertAutocast(torch.nn.Module):
    def __init__(self, act):
        super().__init__()
        cfg = transformers.BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                      intermediate_size=64, max_position_embeddings=64, hidden_act=act)
        self.bert = transformers.BertModel(cfg, add_pooling_layer=False)

    def forward(self, input_ids):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = self.bert(input_ids=input_ids, return_dict=False)[0]
        return h.float()


def make_model(act="gelu"):
    return BertAutocast(act)


def example_inputs():
    return (torch.randint(0, 128, (2, 16)),)
