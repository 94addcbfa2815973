"""known-bug: Tencent/ncnn#6836 -- ncnn's Interp samples at the wrong positions for a non-integer scale factor
(F.interpolate(scale_factor=1.5, mode="bilinear")): the outputs differ from torch's."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case

C, H = 3, 7  # a 7x7 map: 1.5x gives 10 (10.5 rounded down), so the rounded size and the factor disagree


class Resize(nn.Module):
    """F.interpolate by a scale factor or to a size."""

    def __init__(self, mode="bilinear", scale=1.5, size=None, align_corners=None):
        super().__init__()
        self.mode, self.scale, self.size, self.ac = mode, scale, size, align_corners

    def forward(self, x):
        if self.size is not None:
            return F.interpolate(x, size=self.size, mode=self.mode, align_corners=self.ac)
        return F.interpolate(x, scale_factor=self.scale, mode=self.mode, align_corners=self.ac)


class MatrixResize(nn.Module):
    """The workaround: the same bilinear resize as two constant matrix products. Bilinear interpolation is
    separable, and torch's own F.interpolate of an identity matrix gives the matrices, so they hold torch's
    sampling positions whatever the engine's Interp does. Written on 2-D views with fixed shapes, so that
    pnnx writes plain Reshape layers (older ncnn releases cannot read its shape expressions)."""

    def __init__(self, size=H, scale=1.5, mode="bilinear", align_corners=False):
        super().__init__()
        eye = torch.eye(size).reshape(1, 1, size, size)
        kw = dict(mode=mode, align_corners=align_corners)
        self.register_buffer("mh", F.interpolate(eye, scale_factor=(scale, 1.0), **kw)[0, 0])  # (out, in)
        self.register_buffer("mw", F.interpolate(eye, scale_factor=(1.0, scale), **kw)[0, 0])  # (in, out)

    def forward(self, x):
        _, c, h, w = x.shape
        oh, ow = self.mh.shape[0], self.mw.shape[1]
        y = torch.matmul(x.reshape(c * h, w), self.mw)  # the width: (c*h, ow)
        y = y.reshape(c, h, ow).transpose(1, 2).reshape(c * ow, h)
        y = torch.matmul(y, self.mh.t())  # the height: (c*ow, oh)
        return y.reshape(1, c, ow, oh).transpose(2, 3)


class Neck(nn.Module):
    """A realistic block: a feature map upsampled by 1.5 to meet a larger one (a multi-scale neck)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lateral = nn.Conv2d(C, C, 1)
        self.out = nn.Conv2d(C, C, 3, padding=1)

    def forward(self, x):
        y = F.interpolate(self.lateral(x), scale_factor=1.5, mode="bilinear", align_corners=False)
        return self.out(torch.relu(y))


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, C, H, H)
    io = dict(input_names=["in0"], output_names=["out0"])
    yield Case("bilinear-1p5", Resize(), (x,), opset=13, dynamo=False, torchscript=True, **io)
    # The workaround: the same resize as two matrix products, fed the same input.
    yield Case("matrix-1p5", MatrixResize(), (x,), opset=13, dynamo=False, torchscript=True, trigger=False,
               rewrites="bilinear-1p5", **io)


def variants():
    torch.manual_seed(1)
    x = torch.randn(1, C, H, H)
    io = dict(input_names=["in0"], output_names=["out0"], torchscript=True)
    yield Case("bilinear-1p5-opset17", Resize(), (x,), opset=17, dynamo=False, **io)
    yield Case("bilinear-1p5-dynamo", Resize(), (x,), opset=18, dynamo=True, export_kwargs={"external_data": False},
               **io)
    yield Case("bilinear-1p5-onnxsim", Resize(), (x,), opset=13, dynamo=False, simplify=True, **io)
    yield Case("bicubic-1p5", Resize("bicubic"), (x,), opset=13, dynamo=False, **io)
    yield Case("bilinear-1p5-align-corners", Resize(align_corners=True), (x,), opset=13, dynamo=False, **io)
    yield Case("nearest-1p5", Resize("nearest"), (x,), opset=13, dynamo=False, **io)
    yield Case("bilinear-0p6", Resize(scale=0.6), (x,), opset=13, dynamo=False, **io)
    yield Case("bilinear-2p5", Resize(scale=2.5), (x,), opset=13, dynamo=False, **io)
    yield Case("neck-1p5", Neck(), (x,), opset=13, dynamo=False, **io)
    yield Case("bilinear-1p5-even-near-miss", Resize(), (torch.randn(1, C, 8, 8),), opset=13, dynamo=False, **io)
    yield Case("bilinear-size-near-miss", Resize(size=(10, 10)), (x,), opset=13, dynamo=False, **io)
    yield Case("nearest-size", Resize("nearest", size=(10, 10)), (x,), opset=13, dynamo=False, **io)
    yield Case("bilinear-2x-near-miss", Resize(scale=2.0), (x,), opset=13, dynamo=False, **io)
    yield Case("nearest-2x-near-miss", Resize("nearest", scale=2.0), (x,), opset=13, dynamo=False, **io)
    yield Case("bilinear-2x-align-corners-near-miss", Resize(scale=2.0, align_corners=True), (x,), opset=13,
               dynamo=False, **io)
