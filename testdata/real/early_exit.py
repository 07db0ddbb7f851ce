"""An early-exit decoder: the blocks of transformers' GPT2Model (small random config), the
deeper ones run only when the shallow head is not confident (torch.cond on the data). On
these inputs the deep branch is taken. The planted relu lands in the deep branch's MLP.

model_kwargs: act ("gelu_new" default, "relu").
"""
import torch
import transformers


class EarlyExit(torch.nn.Module):
    def __init__(self, act):
        super().__init__()
        cfg = transformers.GPT2Config(vocab_size=128, n_embd=32, n_layer=3, n_head=4, n_positions=64,
                                      activation_function=act)
        gpt2 = transformers.GPT2Model(cfg)
        self.embed, self.norm = gpt2.wte, gpt2.ln_f
        self.shallow, self.deep = gpt2.h[0], gpt2.h[1:]
        self.head = torch.nn.Linear(32, 128)

    def forward(self, input_ids):
        h = self.shallow(self.embed(input_ids))
        confidence = self.head(h).softmax(-1).amax(-1).mean()

        def exit_now(h):
            return self.head(h)

        def go_deeper(h):
            for block in self.deep:
                h = block(h)
            return self.head(self.norm(h))

        return torch.cond(confidence > 0.9, exit_now, go_deeper, (h,))


def make_model(act="gelu_new"):
    return EarlyExit(act)


def example_inputs():
    return (torch.randint(0, 128, (2, 16)),)
