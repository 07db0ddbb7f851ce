"""An int8 image classifier quantized the way PyTorch documents it for CPU serving: the PT2E
flow (torchao's prepare_pt2e with X86InductorQuantizer's default config, calibration,
convert_pt2e), packaged with inductor's freezing as that recipe compiles it. make_model()
returns the converted module as the flow gives it (an exported graph module, which refuses
model.eval()). The float head after the classifier (`head`) is where inductor leaves an
elementwise op in generated code: the planted case puts a relu there.
"""
import torch
from torch import nn


class SmallCNN(nn.Module):
    def __init__(self, head="none"):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1, stride=2), nn.BatchNorm2d(32), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(32, 10)
        self.head = head

    def forward(self, x):
        logits = self.classifier(torch.flatten(self.features(x), 1))
        if self.head == "relu":
            return torch.relu(logits * 0.5) + logits
        return logits


def example_inputs():
    return (torch.randn(2, 3, 16, 16),)


def make_model(head="none"):
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer, get_default_x86_inductor_quantization_config)

    model = SmallCNN(head).eval()
    with torch.no_grad():
        for m in model.modules():  # batch norms with statistics of their own, not the identity
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
    exported = torch.export.export(model, example_inputs()).module()
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config())
    prepared = prepare_pt2e(exported, quantizer)
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for _ in range(8):  # calibration
            prepared(torch.randn(2, 3, 16, 16, generator=gen))
    return convert_pt2e(prepared)
