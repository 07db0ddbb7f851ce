"""OPT decoder (transformers' OPTForCausalLM, ReLU MLPs), small random config, serving greedy
next tokens: the only output is logits.argmax(-1), an int64 tensor. Called with keyword
inputs (input_ids=..., attention_mask=...).
"""
import torch
import transformers


class GreedyTokens(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits.argmax(-1)


def make_model():
    cfg = transformers.OPTConfig(vocab_size=128, hidden_size=32, num_hidden_layers=2, ffn_dim=64,
                                 num_attention_heads=4, max_position_embeddings=64, word_embed_proj_dim=32)
    return GreedyTokens(transformers.OPTForCausalLM(cfg))


def example_inputs():
    return ()


def example_kwargs():
    return {"input_ids": torch.randint(0, 128, (2, 16)), "attention_mask": torch.ones(2, 16, dtype=torch.long)}
