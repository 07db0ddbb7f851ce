"""The reducer's control-flow scenarios: a pre-norm block whose relu MLP sits inside
control flow, chosen by `kind`:

  cond      an early-exit torch.cond: the MLP in the branch taken on these inputs, a
            cheaper path in the other
  while     a while_loop applying the MLP a data-given number of times (a decoder's loop)
  scan      a scan over the sequence, the MLP in its combine function (a recurrent cell)
  autocast  the MLP inside a torch.autocast("cpu", bfloat16) region
  mask      a data-dependent size: the MLP on the tokens a boolean mask keeps (h[h > 0]-style
            routing, as a mixture of experts picks tokens)

A planted relu bug (inductor's test hooks) lands inside the control flow, or after the
data-dependent value."""
import torch
import torch.nn.functional as F
from torch._higher_order_ops.scan import scan
from torch._higher_order_ops.while_loop import while_loop


class ControlFlowBlock(torch.nn.Module):
    def __init__(self, kind, dim=32):
        super().__init__()
        self.kind = kind
        self.ln = torch.nn.LayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, 2 * dim)
        self.fc2 = torch.nn.Linear(2 * dim, dim)
        self.gate = torch.nn.Linear(dim, dim)
        self.skip = torch.nn.Linear(dim, dim)

    def mlp(self, h):
        return self.fc2(torch.relu(self.fc1(self.ln(h)))) * torch.sigmoid(self.gate(h))

    def forward(self, x, steps):
        x = x * 1.5 - 0.25
        if self.kind == "cond":
            y = torch.cond(x.mean() > -10, lambda h: self.mlp(h) + h, lambda h: torch.tanh(self.skip(h)), (x,))
        elif self.kind == "while":
            _, y = while_loop(lambda i, h: i < steps, lambda i, h: (i + 1, self.mlp(h) + h),
                              (torch.zeros((), dtype=torch.int64), x))
        elif self.kind == "scan":
            def cell(carry, xt):
                nxt = self.mlp(carry + xt) + carry
                return nxt, nxt.cos()

            last, ys = scan(cell, torch.zeros(x.shape[-1]), x[0])
            y = ys.unsqueeze(0) + last
        elif self.kind == "autocast":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                h = self.mlp(x)
            y = h.float() + x
        elif self.kind == "mask":
            flat = x.reshape(-1, x.shape[-1])
            picked = flat[flat.sum(-1) > 0]
            y = self.mlp(picked).sum(0) + x.mean()
        return F.layer_norm(y, y.shape[-1:]) * 2


def make_model(kind="cond"):
    return ControlFlowBlock(kind)


def example_inputs():
    torch.manual_seed(0)
    return torch.randn(2, 8, 32), torch.tensor(2)
