"""DistilBERT encoder (transformers' DistilBertModel) with the team's own C++ operator on top:
corpus_ops::rms_scale (corpus_ops.cc), given to the harness only as a shared library
(op_libraries), never linked into the test. Small random config.

model_kwargs: act ("gelu" default, "relu" for the planted relu bug).
"""
import torch
import transformers


class Encoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        hidden = self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)[0]
        return torch.ops.corpus_ops.rms_scale(hidden, 1e-6)


def make_model(act="gelu"):
    cfg = transformers.DistilBertConfig(vocab_size=128, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                                        max_position_embeddings=64, activation=act)
    return Encoder(transformers.DistilBertModel(cfg))


def example_inputs():
    ids = torch.randint(0, 128, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.long)
    mask[0, 10:] = 0
    return ids, mask
