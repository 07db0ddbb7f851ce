"""Token-dispatch routing for transformers' mixture-of-experts layers, registered in its
experts interface (transformers.integrations.moe.ALL_EXPERTS_FUNCTIONS) as
"token_dispatch": each expert runs on exactly the tokens routed to it, found with
torch.where, so the number of tokens per expert is a data-dependent size (an unbacked symbol
in the exported program), as in dropless MoE kernels. The experts' own weights are used as
transformers lays them out; only the dispatch differs from its batched_mm implementation."""
import torch
from transformers.integrations.moe import ALL_EXPERTS_FUNCTIONS


def _linear(x, weight, bias, is_transposed):
    out = x @ weight if is_transposed else x @ weight.t()
    return out if bias is None else out + bias


def token_dispatch_experts_forward(self, hidden_states, top_k_index, top_k_weights):
    final = torch.zeros_like(hidden_states)
    for e in range(self.num_experts):
        token_idx, slot = torch.where(top_k_index == e)
        x = hidden_states[token_idx]
        if self.has_gate:
            h = _linear(x, self.gate_up_proj[e], self.gate_up_proj_bias[e] if self.has_bias else None, self.is_transposed)
            h = self._apply_gate(h)
        else:
            h = self.act_fn(_linear(x, self.up_proj[e], self.up_proj_bias[e] if self.has_bias else None, self.is_transposed))
        out = _linear(h, self.down_proj[e], self.down_proj_bias[e] if self.has_bias else None, self.is_transposed)
        final.index_add_(0, token_idx, out * top_k_weights[token_idx, slot].unsqueeze(-1))
    return final


ALL_EXPERTS_FUNCTIONS["token_dispatch"] = token_dispatch_experts_forward
