"""known-bug: Tencent/ncnn#2100 -- YOLOv5's Focus slices x[..., ::2, ::2]; onnx2ncnn drops the step."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case

C, OUT, H = 3, 8, 16  # input channels, conv outputs, input height and width


def space_to_depth(x):
    """YOLOv5's Focus: four strided slices, concatenated on the channel axis."""
    return torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1)


class Focus(nn.Module):
    """Focus as YOLOv5 (v1-v5) writes it: space-to-depth by strided slicing, then a 1x1 conv."""

    def __init__(self, act=None):
        super().__init__()
        self.conv = nn.Conv2d(4 * C, OUT, 1)
        self.act = act

    def forward(self, x):
        y = self.conv(space_to_depth(x))
        return self.act(y) if self.act is not None else y


class UnshuffleFocus(nn.Module):
    """The workaround: pixel_unshuffle, with the conv's input channels permuted to match Focus's order.

    Focus puts offset (dy, dx) of channel c at k*C + c with k = dy + 2*dx; pixel_unshuffle puts it at
    c*4 + dy*2 + dx. The same weights, reordered, give the same outputs."""

    def __init__(self, focus: Focus):
        super().__init__()
        self.conv = nn.Conv2d(4 * C, OUT, 1)
        w = focus.conv.weight.detach()
        order = [(dy + 2 * dx) * C + c for c in range(C) for dy in (0, 1) for dx in (0, 1)]
        with torch.no_grad():
            self.conv.weight.copy_(w[:, order])
            self.conv.bias.copy_(focus.conv.bias)
        self.act = focus.act

    def forward(self, x):
        y = self.conv(F.pixel_unshuffle(x, 2))
        return self.act(y) if self.act is not None else y


class SpaceToDepth(nn.Module):
    def forward(self, x):
        return space_to_depth(x)


def focus():
    torch.manual_seed(0)
    return Focus()


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, C, H, H)
    io = dict(input_names=["in0"], output_names=["out0"])
    yield Case("focus", focus(), (x,), opset=13, dynamo=False, torchscript=True, **io)
    # The workaround: the same Focus (focus() seeds its weights), rewritten with pixel_unshuffle and the conv's
    # input channels permuted to match; fed the same input.
    yield Case("pixel-unshuffle", UnshuffleFocus(focus()), (x,), opset=13, dynamo=False, torchscript=True,
               trigger=False, rewrites="focus", **io)
    # The slicing alone, without weights: onnx2ncnn writes it as four step-less Crops and a Concat, which the
    # ncnn runtime check runs on each ncnn release.
    yield Case("space-to-depth", SpaceToDepth(), (x,), opset=13, dynamo=False, **io)


class Strided(nn.Module):
    """Ways real models slice with a step, and near misses that slice without one."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.conv = nn.Conv2d(4 * C if kind in ("focus", "focus-relu") else C, OUT, 1)

    def forward(self, x):
        if self.kind == "focus":
            return self.conv(space_to_depth(x))
        if self.kind == "focus-relu":  # an elementwise op before the slicing
            return self.conv(space_to_depth(torch.relu(x)))
        if self.kind == "subsample":  # keep every other pixel (a cheap 2x downsample)
            return self.conv(x[:, :, ::2, ::2])
        if self.kind == "subsample-w":  # a step on one axis only
            return self.conv(x[:, :, :, ::2])
        if self.kind == "crop":  # near miss: a contiguous crop, step 1
            return self.conv(x[:, :, 1:-1, 2:])
        if self.kind == "unshuffle":  # near miss: pixel_unshuffle does the same without slicing
            return nn.functional.conv2d(F.pixel_unshuffle(x, 2), torch.ones(OUT, 4 * C, 1, 1) / 12)
        raise ValueError(self.kind)


def variant(name, kind, opset=13, dynamo=False, **kw):
    torch.manual_seed(0)
    x = torch.randn(1, C, H, H)
    return Case(name, Strided(kind), (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    yield variant("focus-opset13", "focus")
    yield variant("focus-opset17", "focus", opset=17)
    yield variant("focus-dynamo", "focus", opset=18, dynamo=True)
    yield variant("focus-onnxsim", "focus", simplify=True)
    yield variant("focus-relu", "focus-relu")
    yield variant("subsample", "subsample")
    yield variant("subsample-w", "subsample-w")
    yield variant("crop-near-miss", "crop")
    yield variant("unshuffle-near-miss", "unshuffle")
