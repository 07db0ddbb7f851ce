"""Audio Spectrogram Transformer (transformers' ASTForAudioClassification): a ViT over
mel-spectrogram patches. Small random config. Called with a keyword input
(input_values=...), it returns transformers' SequenceClassifierOutput, a dict.

model_kwargs: head ("calibrated" adds a small calibration term, 1e-4 * log1p(softmax), to
the logits: it carries the planted log1p bug, an error of about 1e-4 that the default fp64
rule lets through and a test's assert_close at 1e-5 does not).
"""
import torch
import transformers


class AudioClassifier(torch.nn.Module):
    def __init__(self, model, head):
        super().__init__()
        if head not in ("", "calibrated"):
            raise ValueError(f"head={head!r}: expected '' or 'calibrated'")
        self.model, self.head = model, head

    def forward(self, input_values):
        out = self.model(input_values=input_values)
        if self.head == "calibrated":
            out["logits"] = out.logits + 1e-4 * torch.log1p(out.logits.softmax(-1))
        return out


def make_model(head=""):
    cfg = transformers.ASTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                                 patch_size=8, frequency_stride=8, time_stride=8, max_length=32, num_mel_bins=32,
                                 num_labels=5)
    return AudioClassifier(transformers.ASTForAudioClassification(cfg), head)


def example_inputs():
    return ()


def example_kwargs():
    return {"input_values": torch.randn(2, 32, 32)}
