"""known-bug: Tencent/ncnn#5442 -- channel LayerNorm converted by onnx2ncnn gives all-NaN outputs;
nn.LayerNorm at opset >= 17 becomes a LayerNormalization layer ncnn cannot load."""

import torch
from torch import nn

from kb.export import Case


class LayerNorm2d_Sc(nn.Module):
    """The reporter's LayerNorm over the channel axis, written with mean and pow(2)."""

    def __init__(self, channels, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.eps = eps

    def forward(self, x):
        C = x.shape[1]
        mu = x.mean(dim=1, keepdim=True)
        var = (x - mu).pow(2).mean(dim=1, keepdim=True)
        y = (x - mu) / (var + self.eps).sqrt()
        return self.weight.view(1, C, 1, 1) * y + self.bias.view(1, C, 1, 1)


class PermuteLayerNorm(nn.Module):
    """The usual replacement: channels last, nn.LayerNorm, channels first."""

    def __init__(self, channels, eps=1e-6):
        super().__init__()
        self.ln = nn.LayerNorm(channels, eps=eps)

    def forward(self, x):
        return self.ln(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class CenteredSquare(nn.Module):
    """Just the step that goes wrong: (x - mean) ** 2, whose base is negative about half the time."""

    def forward(self, x):
        return (x - x.mean(dim=1, keepdim=True)).pow(2)


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, 8, 16, 16)  # about half the values are negative
    io = dict(input_names=["in0"], output_names=["out0"], dynamo=False)
    yield Case("channel-ln", LayerNorm2d_Sc(8), (x,), opset=17, torchscript=True, **io)
    yield Case("channel-ln-opset18", LayerNorm2d_Sc(8), (x,), opset=18, **io)
    yield Case("permute-ln", PermuteLayerNorm(8), (x,), opset=17, torchscript=True, **io)
    yield Case("centered-square", CenteredSquare(), (x,), opset=17, **io)
