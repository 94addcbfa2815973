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


class CenteredCube(nn.Module):
    """(x - mean) ** 3, a skewness term: an odd power, so pnnx cannot write it as a square."""

    def forward(self, x):
        return (x - x.mean(dim=1, keepdim=True)).pow(3)


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, 8, 16, 16)  # about half the values are negative
    io = dict(input_names=["in0"], output_names=["out0"], dynamo=False)
    yield Case("channel-ln", LayerNorm2d_Sc(8), (x,), opset=17, torchscript=True, **io)
    yield Case("channel-ln-opset18", LayerNorm2d_Sc(8), (x,), opset=18, **io)
    yield Case("permute-ln", PermuteLayerNorm(8), (x,), opset=17, torchscript=True, **io)
    yield Case("centered-square", CenteredSquare(), (x,), opset=17, **io)
    yield Case("centered-cube", CenteredCube(), (x,), opset=17, torchscript=True, **io)


class RMSNorm(nn.Module):
    """x / sqrt(mean(x ** 2)): the square of a base that is negative half the time, with no Sub."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return x / (x.pow(2).mean(dim=self.dim, keepdim=True) + 1e-6).sqrt()


class LastAxisLayerNorm(nn.Module):
    """nn.LayerNorm over the last axis: exported below opset 17 as ReduceMean, Sub, Pow, ..."""

    def __init__(self, width):
        super().__init__()
        self.ln = nn.LayerNorm(width, eps=1e-6)

    def forward(self, x):
        return self.ln(x)


class NonNegativeSquare(nn.Module):
    """A near miss: the base of the pow is never negative."""

    def __init__(self, first):
        super().__init__()
        self.first = first

    def forward(self, x):
        y = self.first(x).pow(2)
        return y / (y.mean(dim=1, keepdim=True) + 1e-6)


def variants():
    torch.manual_seed(0)
    x = torch.randn(1, 8, 16, 16)
    io = dict(input_names=["in0"], output_names=["out0"], dynamo=False)
    yield Case("v-channel-ln-opset13", LayerNorm2d_Sc(8), (x,), opset=13, **io)
    yield Case("v-channel-ln-onnxsim", LayerNorm2d_Sc(8), (x,), opset=13, simplify=True, **io)
    yield Case("v-rmsnorm-channel", RMSNorm(1), (x,), opset=13, **io)
    yield Case("v-rmsnorm-last-axis", RMSNorm(-1), (x,), opset=13, **io)
    yield Case("v-last-axis-ln-opset13", LastAxisLayerNorm(16), (x,), opset=13, **io)
    yield Case("v-last-axis-ln-onnxsim", LastAxisLayerNorm(16), (x,), opset=13, simplify=True, **io)
    yield Case("v-layernormalization-onnxsim", PermuteLayerNorm(8), (x,), opset=17, simplify=True, **io)
    yield Case("v-abs-square", NonNegativeSquare(torch.abs), (x,), opset=13, **io)
    yield Case("v-sigmoid-square", NonNegativeSquare(torch.sigmoid), (x,), opset=13, **io)
    yield Case("v-relu-square", NonNegativeSquare(torch.relu), (x,), opset=13, **io)
