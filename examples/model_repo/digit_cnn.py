"""A digit recogniser for 28x28 greyscale images: two conv stages with group norm and max
pooling, then a linear classifier over the flattened features."""
import torch


class DigitCnn(torch.nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, kernel_size=5, padding=2)
        self.conv2 = torch.nn.Conv2d(16, 32, kernel_size=3, padding=1)
        self.norm = torch.nn.GroupNorm(4, 32)
        self.classify = torch.nn.Linear(32 * 7 * 7, classes)

    def forward(self, images):
        x = torch.nn.functional.max_pool2d(torch.relu(self.conv1(images)), 2)
        x = torch.nn.functional.max_pool2d(torch.relu(self.norm(self.conv2(x))), 2)
        return torch.log_softmax(self.classify(x.flatten(1)), dim=-1)


def make_model():
    return DigitCnn()


def example_inputs():
    return (torch.rand(4, 1, 28, 28),)
