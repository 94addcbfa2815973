"""known-bug: F.interpolate(..., antialias=True) downscaling a feature map: from ONNX (torch's dynamo exporter writes
Resize with antialias=1) pnnx writes a plain bilinear ncnn Interp without a word, and ncnn's values are not torch's;
from TorchScript pnnx leaves aten::_upsample_bilinear2d_aa and its arguments for ncnn, which cannot load them."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import seeded
from kb.export import Case


class Down(nn.Module):
    """A Conv2d, then F.interpolate of its output with the given arguments (an image pyramid's downscale step)."""

    def __init__(self, **kw):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.kw = kw

    def forward(self, x):
        return F.interpolate(self.conv(x), **self.kw)


class DownByConv(nn.Module):
    """The workaround: bilinear antialiased x0.5 as torch computes it, a fixed depthwise 4x4 stride-2 conv (the
    triangle filter [1, 3, 3, 1] / 8 in each direction) times a constant map that renormalizes the border taps."""

    def __init__(self, size=(32, 32)):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        k1 = torch.tensor([1.0, 3.0, 3.0, 1.0]) / 8
        k = torch.outer(k1, k1)[None, None]
        self.blur = nn.Conv2d(8, 8, 4, stride=2, padding=1, groups=8, bias=False)
        self.blur.weight.data.copy_(k.expand(8, 1, 4, 4))
        self.blur.weight.requires_grad_(False)
        self.register_buffer("inv_norm", 1 / F.conv2d(torch.ones(1, 1, *size), k, stride=2, padding=1))

    def forward(self, x):
        return self.blur(self.conv(x)) * self.inv_norm


AA = dict(scale_factor=0.5, mode="bilinear", antialias=True)
DYNAMO = dict(opset=18, dynamo=True, export_kwargs={"external_data": False})


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, 3, 32, 32)
    io = dict(input_names=["in0"], output_names=["out0"], torchscript=True, **DYNAMO)
    yield Case("downscale-aa", seeded(lambda: Down(**AA)), (x,), **io)
    # The workaround: the same conv weights (same seed), the antialiased resize written as a fixed conv.
    yield Case("downscale-by-conv", seeded(lambda: DownByConv()), (x,), trigger=False, rewrites="downscale-aa", **io)
    # Control: the same downscale without antialias.
    yield Case("downscale-plain", seeded(lambda: Down(scale_factor=0.5, mode="bilinear")), (x,), trigger=False, **io)


def variant(name, module, x, **kw):
    return Case(name, module, (x,), ["in0"], ["out0"], **{**DYNAMO, **kw})


def variants():
    torch.manual_seed(1)
    x = torch.randn(1, 3, 32, 32)
    aa = seeded(lambda: Down(**AA))
    yield variant("bilinear-half", aa, x)
    yield variant("bilinear-half-onnxsim", aa, x, simplify=True)
    yield variant("bilinear-half-opset19", aa, x, opset=19)
    yield variant("bilinear-quarter", seeded(lambda: Down(scale_factor=0.25, mode="bilinear", antialias=True)), x)
    yield variant("bilinear-three-quarters", seeded(lambda: Down(scale_factor=0.75, mode="bilinear", antialias=True)), x)
    yield variant("bilinear-half-height", seeded(lambda: Down(scale_factor=(0.5, 1.0), mode="bilinear", antialias=True)), x)
    yield variant("bicubic-half", seeded(lambda: Down(scale_factor=0.5, mode="bicubic", antialias=True)), x)
    yield variant("bilinear-half-align-corners",
                  seeded(lambda: Down(scale_factor=0.5, mode="bilinear", antialias=True, align_corners=True)), x)
    # Near misses: no antialias, mode="area" (an average pool), the conv rewrite.
    yield variant("bilinear-half-plain-near-miss", seeded(lambda: Down(scale_factor=0.5, mode="bilinear")), x)
    yield variant("area-half-near-miss", seeded(lambda: Down(scale_factor=0.5, mode="area")), x)
    yield variant("by-conv-near-miss", seeded(lambda: DownByConv()), x)
