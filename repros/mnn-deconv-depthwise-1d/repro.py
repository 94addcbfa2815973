"""KB028: regression guard for alibaba/MNN#626, #1004 -- depthwise, grouped and 1-D ConvTranspose."""

import torch
from torch import nn

from kb.export import Case


class Deconv(nn.Module):
    def __init__(self, cin, cout, groups=1, dims=2, k=4, stride=2, padding=1, output_padding=0, bias=True,
                 bn=False):
        super().__init__()
        cls = nn.ConvTranspose1d if dims == 1 else nn.ConvTranspose2d
        self.deconv = cls(cin, cout, k, stride=stride, padding=padding, output_padding=output_padding,
                          groups=groups, bias=bias)
        self.bn = (nn.BatchNorm1d if dims == 1 else nn.BatchNorm2d)(cout) if bn else None
        if self.bn is not None:
            with torch.no_grad():
                self.bn.running_mean.uniform_(-1, 1)
                self.bn.running_var.uniform_(0.25, 2)

    def forward(self, x):
        y = self.deconv(x)
        return torch.relu(self.bn(y)) if self.bn is not None else y


class UpsampleConv(nn.Module):
    """The near miss: nearest upsampling then a depthwise Conv, no ConvTranspose at all."""

    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1, groups=c)

    def forward(self, x):
        return self.conv(nn.functional.interpolate(x, scale_factor=2.0, mode="nearest"))


def case(name, model, shape, opset=13, dynamo=False, **kw):
    torch.manual_seed(1)
    return Case(name, model, (torch.randn(*shape),), ["x"], ["y"], opset=opset, dynamo=dynamo, **kw)


def cases():
    torch.manual_seed(0)
    yield case("depthwise", Deconv(8, 8, groups=8), (1, 8, 7, 9))
    yield case("grouped", Deconv(8, 16, groups=4), (1, 8, 7, 9))
    yield case("deconv1d", Deconv(8, 16, dims=1), (1, 8, 20))
    yield case("ungrouped", Deconv(8, 16), (1, 8, 7, 9), trigger=False)  # control: plain 2-D deconvolution


def variants():
    torch.manual_seed(0)
    yield case("depthwise-no-bias", Deconv(64, 64, groups=64, bias=False), (1, 64, 5, 5))  # MNN#626's layer
    yield case("depthwise-multiplier", Deconv(8, 16, groups=8), (1, 8, 7, 9))  # two outputs per group
    yield case("grouped-uneven", Deconv(6, 9, groups=3, k=3, stride=2, padding=1, output_padding=1), (1, 6, 5, 7))
    yield case("depthwise-bn-relu", Deconv(8, 8, groups=8, bn=True), (1, 8, 7, 9))
    yield case("deconv1d-grouped", Deconv(8, 8, groups=4, dims=1), (1, 8, 20))
    yield case("deconv1d-depthwise", Deconv(8, 8, groups=8, dims=1, k=3, stride=1, padding=1), (1, 8, 20))
    yield case("depthwise-opset17-onnxsim", Deconv(8, 8, groups=8), (1, 8, 7, 9), opset=17, simplify=True)
    yield case("depthwise-dynamo", Deconv(8, 8, groups=8), (1, 8, 7, 9), opset=18, dynamo=True)
    yield case("deconv1d-dynamo", Deconv(8, 16, dims=1), (1, 8, 20), opset=18, dynamo=True)
    yield case("upsample-conv", UpsampleConv(8), (1, 8, 7, 9))  # near miss
    yield case("ungrouped-2d", Deconv(8, 16), (1, 8, 7, 9))  # near miss
