"""A small causal text encoder: token and position embeddings, a stack of pre-norm
transformer layers (multi-head self-attention through scaled_dot_product_attention, a GELU
feed-forward), a final norm and a next-token head tied to the embedding."""
import torch

VOCAB, DIM, HEADS, LAYERS, CONTEXT = 256, 48, 4, 3, 24


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm = torch.nn.LayerNorm(DIM)
        self.qkv = torch.nn.Linear(DIM, 3 * DIM)
        self.proj = torch.nn.Linear(DIM, DIM)
        self.ff_norm = torch.nn.LayerNorm(DIM)
        self.ff_in = torch.nn.Linear(DIM, 4 * DIM)
        self.ff_out = torch.nn.Linear(4 * DIM, DIM)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.attn_norm(x)).split(DIM, dim=-1)
        heads = lambda y: y.view(b, t, HEADS, DIM // HEADS).transpose(1, 2)
        a = torch.nn.functional.scaled_dot_product_attention(heads(q), heads(k), heads(v), is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, DIM))
        return x + self.ff_out(torch.nn.functional.gelu(self.ff_in(self.ff_norm(x))))


class TextEncoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = torch.nn.Embedding(VOCAB, DIM)
        self.positions = torch.nn.Embedding(CONTEXT, DIM)
        self.layers = torch.nn.ModuleList(Layer() for _ in range(LAYERS))
        self.norm = torch.nn.LayerNorm(DIM)

    def forward(self, ids):
        x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1], device=ids.device))
        for layer in self.layers:
            x = layer(x)
        return self.norm(x) @ self.tokens.weight.t()


def make_model():
    return TextEncoder()


def example_inputs():
    return (torch.randint(0, VOCAB, (2, CONTEXT)),)
