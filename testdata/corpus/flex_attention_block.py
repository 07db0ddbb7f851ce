"""Attention written with torch.nn.attention.flex_attention, as a team adopts it for
sliding-window or soft-capped attention: a soft-cap score_mod and a sliding-window causal
block mask made in forward (create_block_mask). AOTI compiles it (inductor's CPU flex
template), but torch's serializer cannot write the exported program (the block mask's
arguments to the flex_attention node), so aoti_package holds it without its program: the
check runs its compiled model and judges it against the eager and float64 outputs Python
recorded when packaging (//testdata:flex_attention_test).
"""
import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

SEQ, HEADS, DIM, WINDOW, CAP = 128, 2, 16, 48, 20.0


def soft_cap(score, b, h, q_idx, kv_idx):
    return CAP * torch.tanh(score / CAP)


def sliding_window_causal(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx <= WINDOW)


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(HEADS * DIM, 3 * HEADS * DIM)
        self.out = torch.nn.Linear(HEADS * DIM, HEADS * DIM)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, HEADS, DIM).permute(2, 0, 3, 1, 4)
        mask = create_block_mask(sliding_window_causal, None, None, s, s, device=x.device)
        y = flex_attention(q, k, v, score_mod=soft_cap, block_mask=mask)
        return self.out(y.transpose(1, 2).reshape(b, s, HEADS * DIM))


def make_model():
    return M()


def example_inputs():
    return (torch.randn(1, SEQ, HEADS * DIM),)
