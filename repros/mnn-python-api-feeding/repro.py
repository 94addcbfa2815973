"""KB055: an image fed to MNN's Python API in the wrong memory layout (NHWC data for an NCHW input)."""

import torch
from torch import nn

from kb.export import Case


def image():
    """A small 'image', NCHW as torch and the ONNX model take it: (1, 3, 6, 5)."""
    torch.manual_seed(0)
    return torch.randn(1, 3, 6, 5)


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


def cases():
    # A user error: no graph pattern shows it (the front matter has no trigger); the feeding does.
    yield Case("conv", ConvNet(), (image(),), ["x"], ["y"], opset=17, dynamo=False)
