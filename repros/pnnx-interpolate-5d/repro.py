"""known-bug: F.interpolate of a 5-D tensor (trilinear, or nearest over depth, height and width), as in a 3-D U-Net
decoder: pnnx prints "unsupported upsample scale_factor" (TorchScript) or "unsupported interpolate scale_factor"
(ONNX) and writes an ncnn Interp with no scale and no size, so ncnn returns the volume at its input size."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import seeded
from kb.export import Case


class Up3d(nn.Module):
    """A Conv3d, then F.interpolate of its 5-D output with the given arguments (a 3-D U-Net's upsampling step)."""

    def __init__(self, **kw):
        super().__init__()
        self.conv = nn.Conv3d(2, 4, 3, padding=1)
        self.kw = kw

    def forward(self, x):
        return F.interpolate(self.conv(x), **self.kw)


class Separable(nn.Module):
    """The workaround: trilinear x2 (align_corners=False) as two bilinear resizes of 4-D views.

    H and W first, with the depth folded into the channels; then the depth, with H*W as the width (scale 1 on that
    axis, which is the identity for align_corners=False). Trilinear interpolation is separable, so this is exact.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(2, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        n, c, d, h, w = y.shape
        z = F.interpolate(y.reshape(n, c * d, h, w), scale_factor=2, mode="bilinear")
        z = F.interpolate(z.reshape(n, c, d, 4 * h * w), size=(2 * d, 4 * h * w), mode="bilinear")
        return z.reshape(n, c, 2 * d, 2 * h, 2 * w)


class Up2d(nn.Module):
    """Control: the same upsampling of a 4-D feature map (Conv2d, bilinear x2), which pnnx converts."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)

    def forward(self, x):
        return F.interpolate(self.conv(x), scale_factor=2, mode="bilinear")


TRILINEAR = dict(scale_factor=2, mode="trilinear")


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, 2, 4, 6, 6)
    x2d = torch.randn(1, 2, 6, 6)
    io = dict(input_names=["in0"], output_names=["out0"])
    yield Case("trilinear", seeded(lambda: Up3d(**TRILINEAR)), (x,), opset=17, dynamo=False, torchscript=True, **io)
    # The workaround: the same weights (same seed), trilinear written as two bilinear resizes of 4-D views.
    yield Case("trilinear-separable", seeded(lambda: Separable()), (x,), opset=17, dynamo=False, torchscript=True,
               trigger=False, rewrites="trilinear", **io)
    yield Case("bilinear-2d", seeded(lambda: Up2d()), (x2d,), opset=17, dynamo=False, torchscript=True,
               trigger=False, **io)


def variant(name, module, x, opset=17, dynamo=False, **kw):
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    torch.manual_seed(1)
    x = torch.randn(1, 2, 4, 6, 6)
    x2d = torch.randn(1, 2, 6, 6)
    tri = seeded(lambda: Up3d(**TRILINEAR))
    yield variant("trilinear-opset13", tri, x, opset=13)
    yield variant("trilinear-opset17", tri, x)
    yield variant("trilinear-dynamo", tri, x, opset=18, dynamo=True, export_kwargs={"external_data": False})
    yield variant("trilinear-onnxsim", tri, x, simplify=True)
    size = seeded(lambda: Up3d(size=(8, 12, 12), mode="trilinear"))
    yield variant("trilinear-size", size, x)
    yield variant("trilinear-size-dynamo", size, x, opset=18, dynamo=True, export_kwargs={"external_data": False})
    yield variant("trilinear-align-corners", seeded(lambda: Up3d(scale_factor=2, mode="trilinear", align_corners=True)), x)
    yield variant("nearest-3d", seeded(lambda: Up3d(scale_factor=2, mode="nearest")), x)
    yield variant("trilinear-hw-only", seeded(lambda: Up3d(scale_factor=(1, 2, 2), mode="trilinear")), x)
    # Near misses: a 4-D bilinear upsample, and the separable rewrite, both converted correctly.
    yield variant("bilinear-2d-near-miss", seeded(lambda: Up2d()), x2d)
    yield variant("separable-near-miss", seeded(lambda: Separable()), x)
