"""KB206: ncnn 1.0.20260526 and later, on x86 with use_bf16_storage on, run a grouped convolution (groups > 1, not
depthwise) through its bf16 path wrong: outputs up to 1e+38 and NaN where each group has a channel count that is not a
multiple of 16 (16 channels in 2 groups, 24 in 3, 64 in 8), read from memory the layer never wrote (other values each
run; a ReLU6 after it keeps them finite); a grouped ConvTranspose2d dies of SIGSEGV. The same
model with fp32 (ncnn's default), a depthwise convolution, and 16 channels per group are right."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class GroupConv(nn.Module):
    """A 1x1 convolution over c_in channels (the layer before it), then a grouped Conv2d (or ConvTranspose2d with
    transpose=True) and a ReLU6, as in MobileNet-style blocks (pnnx fuses it into the layer; it also clips the
    garbage the bug reads to [0, 6], so a run never sees NaN and the signature is the same each run). dense=True
    computes the same function with a dense layer whose weight is block-diagonal (zero across groups): the
    workaround; the grouped layer is made first either way, so the weights are the same."""

    def __init__(self, c_in=16, c_out=16, k=3, stride=1, pad=1, groups=2, transpose=False, dense=False):
        super().__init__()
        self.pre = nn.Conv2d(c_in, c_in, 1)
        make = nn.ConvTranspose2d if transpose else nn.Conv2d
        conv = make(c_in, c_out, k, stride, pad, groups=groups)
        if dense:
            full = make(c_in, c_out, k, stride, pad)
            w = torch.zeros_like(full.weight)
            gi, go = c_in // groups, c_out // groups
            for g in range(groups):
                if transpose:  # (in, out / groups, k, k)
                    w[g * gi:(g + 1) * gi, g * go:(g + 1) * go] = conv.weight[g * gi:(g + 1) * gi]
                else:  # (out, in / groups, k, k)
                    w[g * go:(g + 1) * go, g * gi:(g + 1) * gi] = conv.weight[g * go:(g + 1) * go]
            with torch.no_grad():
                full.weight.copy_(w)
                full.bias.copy_(conv.bias)
            conv = full
        self.conv = conv

    def forward(self, x):
        return F.relu6(self.conv(self.pre(x)))


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    x = randn(1, 16, 7, 9)
    yield Case("group-conv", seeded(GroupConv), (x,), opset=13, dynamo=False, torchscript=True, ways=True, **IO)
    yield Case("group-deconv", seeded(GroupConv, k=4, stride=2, transpose=True), (x,), opset=13, dynamo=False,
               torchscript=True, **IO)
    yield Case("depthwise", seeded(GroupConv, groups=16), (x,), opset=13, dynamo=False, torchscript=True,
               trigger=False, **IO)
    yield Case("group-conv-dense", seeded(GroupConv, dense=True), (x,), opset=13, dynamo=False, torchscript=True,
               trigger=False, rewrites="group-conv", **IO)
    yield Case("group-deconv-dense", seeded(GroupConv, k=4, stride=2, transpose=True, dense=True), (x,), opset=13,
               dynamo=False, torchscript=True, trigger=False, rewrites="group-deconv", **IO)


def variants():
    x = randn(1, 16, 7, 9)
    yield Case("group-conv-1x1-g4", seeded(GroupConv, k=1, pad=0, groups=4), (x,), opset=13, dynamo=False,
               torchscript=True, **IO)
    yield Case("group-conv-s2-g8-to-32", seeded(GroupConv, 16, 32, stride=2, groups=8), (x,), opset=13,
               dynamo=False, torchscript=True, **IO)
    yield Case("group-conv-8-channels", seeded(GroupConv, 8, 8), (randn(1, 8, 7, 9),), opset=13, dynamo=False,
               torchscript=True, **IO)
    yield Case("group-conv-24-g3", seeded(GroupConv, 24, 24, groups=3), (randn(1, 24, 7, 9),), opset=13,
               dynamo=False, torchscript=True, **IO)
    yield Case("group-conv-64-g8", seeded(GroupConv, 64, 64, groups=8), (randn(1, 64, 7, 9),), opset=13,
               dynamo=False, torchscript=True, **IO)
    yield Case("group-deconv-32-g2", seeded(GroupConv, 32, 32, k=4, stride=2, transpose=True),
               (randn(1, 32, 7, 9),), opset=13, dynamo=False, torchscript=True, **IO)
    # Near misses: 16 channels per group, a depthwise convolution.
    yield Case("group-conv-32-g2-near-miss", seeded(GroupConv, 32, 32), (randn(1, 32, 7, 9),), opset=13,
               dynamo=False, torchscript=True, **IO)
    yield Case("group-conv-64-g4-near-miss", seeded(GroupConv, 64, 64, groups=4), (randn(1, 64, 7, 9),), opset=13,
               dynamo=False, torchscript=True, **IO)
    yield Case("depthwise-near-miss", seeded(GroupConv, groups=16), (x,), opset=13, dynamo=False, torchscript=True,
               **IO)
