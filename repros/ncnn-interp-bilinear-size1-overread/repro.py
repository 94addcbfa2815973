"""KB232: ncnn's bilinear Interp from an input one pixel wide (or high) reads memory before the input.

`aspp`: a small DeepLabV3+ as in Tencent/ncnn#4981 (bubbliiiing's deeplabv3-plus-pytorch): a stride-2 stem, the ASPP
whose fifth branch is torch.mean over H then W (a 1x1 map), a 1x1 conv, and F.interpolate(bilinear,
align_corners=True) back to the ASPP's size before a five-way torch.cat; then a low-level branch and a second cat.
`global-feature`: that fifth branch's resize alone, fed straight from the model input (3 channels: ncnn keeps them
unpacked, so the read lands in the caller's own buffer, where test_checks.py puts a NaN)."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


def cbr(c_in, c_out, k=3, stride=1, dilation=1):
    return nn.Sequential(nn.Conv2d(c_in, c_out, k, stride, dilation * (k - 1) // 2, dilation=dilation),
                         nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class ASPP(nn.Module):
    def __init__(self, c_in, c_out, mode):
        super().__init__()
        self.mode = mode
        self.branch1, self.branch2 = cbr(c_in, c_out, 1), cbr(c_in, c_out, 3, dilation=2)
        self.branch3, self.branch4 = cbr(c_in, c_out, 3, dilation=4), cbr(c_in, c_out, 3, dilation=6)
        self.branch5 = cbr(c_in, c_out, 1)
        self.conv_cat = cbr(c_out * 5, c_out, 1)

    def forward(self, x):
        b, c, row, col = x.size()
        g = torch.mean(torch.mean(x, 2, True), 3, True)  # the thread's global feature: 1x1
        g = self.branch5(g)
        if self.mode == "bilinear":
            g = F.interpolate(g, (row, col), None, "bilinear", True)
        else:  # the workaround: a 1x1 map resized is a constant, which nearest gives without the read
            g = F.interpolate(g, (row, col), None, "nearest")
        return self.conv_cat(torch.cat([self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x), g], 1))


class DeepLab(nn.Module):
    def __init__(self, mode="bilinear"):
        super().__init__()
        self.stem, self.low = cbr(3, 16, 3, 2), cbr(16, 24, 3, 2)
        self.high = cbr(24, 32, 3, 2)
        self.aspp = ASPP(32, 16, mode)
        self.shortcut = cbr(24, 8, 1)
        self.cat_conv = nn.Sequential(cbr(24, 16, 3), cbr(16, 16, 3))
        self.cls = nn.Conv2d(16, 3, 1)

    def forward(self, x):
        h, w = x.size(2), x.size(3)
        low = self.low(self.stem(x))
        y = self.aspp(self.high(low))
        low = self.shortcut(low)
        y = F.interpolate(y, (low.size(2), low.size(3)), mode="bilinear", align_corners=True)
        y = self.cls(self.cat_conv(torch.cat((y, low), 1)))
        return F.interpolate(y, (h, w), mode="bilinear", align_corners=True)


class Resize(nn.Module):
    def __init__(self, size, mode="bilinear", align_corners=True):
        super().__init__()
        self.size, self.mode, self.align_corners = size, mode, align_corners

    def forward(self, x):
        if self.mode == "nearest":
            return F.interpolate(x, self.size, mode="nearest")
        return F.interpolate(x, self.size, mode=self.mode, align_corners=self.align_corners)


def cases():
    image = randn(1, 3, 64, 64)
    yield Case("aspp", seeded(DeepLab), (image,), opset=13, dynamo=False, torchscript=True)
    yield Case("aspp-nearest", seeded(DeepLab, "nearest"), (image,), opset=13, dynamo=False, torchscript=True,
               rewrites="aspp")
    g = randn(1, 3, 1, 1)
    # simplify: onnx2ncnn has no Shape layer, so its users run onnxsim first (pnnx reads the TorchScript file)
    yield Case("global-feature", Resize((8, 8)), (g,), opset=13, dynamo=False, torchscript=True, simplify=True)
    yield Case("global-feature-nearest", Resize((8, 8), "nearest"), (g,), opset=13, dynamo=False, torchscript=True,
               rewrites="global-feature")


def variants():
    """The same resize of inputs of other shapes and modes, fed the same way (a NaN just before the input). No map 1
    high and wider than 1: there ncnn weights by 0 a row buffer it has not filled, whose stale bytes decide the
    verdict (8 NaN of 192 in 1 of 30 runs measured while writing this entry), not the NaN this feed puts before the
    input."""
    yield Case("one-pixel-half-pixel", Resize((8, 8), align_corners=False), (randn(1, 3, 1, 1),), opset=13,
               dynamo=False, torchscript=True)
    yield Case("one-column", Resize((8, 8)), (randn(1, 3, 4, 1),), opset=13, dynamo=False, torchscript=True)
    yield Case("two-by-two", Resize((8, 8)), (randn(1, 3, 2, 2),), opset=13, dynamo=False, torchscript=True)
    yield Case("one-pixel-nearest", Resize((8, 8), "nearest"), (randn(1, 3, 1, 1),), opset=13, dynamo=False,
               torchscript=True)
    yield Case("one-pixel-bicubic", Resize((8, 8), "bicubic"), (randn(1, 3, 1, 1),), opset=13, dynamo=False,
               torchscript=True)
