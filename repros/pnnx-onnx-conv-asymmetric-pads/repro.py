"""KB210: an ONNX Conv with asymmetric pads (end != begin), as onnx-simplifier writes F.pad + Conv (and as
TensorFlow's SAME padding exports). pnnx 20240715 and 20241223 leave that Conv unconverted ('ignore Conv ...
param pads=(0,0,1,1)') and ncnn cannot load it; pnnx 20250403 converts it (Tencent/ncnn PR #5965)."""

import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class PadConv(nn.Module):
    """F.pad(x, pad) (zeros; torch's order: last axis first), then a convolution without padding of its own."""

    def __init__(self, pad=(0, 1, 0, 1), cin=3, cout=8, k=3, stride=1, groups=1, dim=2):
        super().__init__()
        conv = nn.Conv1d if dim == 1 else nn.Conv2d
        self.conv = conv(cin, cout, k, stride=stride, groups=groups)
        self.pad = pad

    def forward(self, x):
        return self.conv(F.pad(x, self.pad))


def image(c=3):
    return randn(1, c, 8, 8)


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    # onnx-simplifier folds the Pad into the Conv: pads=[0, 0, 1, 1] (top, left, bottom, right).
    yield Case("pad-fused-asymmetric", seeded(PadConv), (image(),), opset=13, dynamo=False, simplify=True, **IO)
    # Workaround: the same export without onnx-simplifier: a Pad node, then a Conv with pads 0.
    yield Case("pad-explicit", seeded(PadConv), (image(),), opset=13, dynamo=False, trigger=False,
               rewrites="pad-fused-asymmetric", **IO)
    # Control: symmetric padding folded the same way, pads=[1, 1, 1, 1].
    yield Case("pad-fused-symmetric", seeded(PadConv, pad=(1, 1, 1, 1)), (image(),), opset=13, dynamo=False,
               simplify=True, trigger=False, **IO)


def variants():
    yield Case("opset11", seeded(PadConv), (image(),), opset=11, dynamo=False, simplify=True, **IO)
    yield Case("opset17", seeded(PadConv), (image(),), opset=17, dynamo=False, simplify=True, **IO)
    yield Case("dynamo-onnxsim", seeded(PadConv), (image(),), opset=18, dynamo=True, simplify=True, **IO)
    yield Case("pads-1-0-2-1", seeded(PadConv, pad=(0, 1, 1, 2)), (image(),), opset=13, dynamo=False,
               simplify=True, **IO)
    yield Case("pads-0-1-1-2", seeded(PadConv, pad=(1, 2, 0, 1)), (image(),), opset=13, dynamo=False,
               simplify=True, **IO)
    yield Case("stride2-same", seeded(PadConv, stride=2), (image(),), opset=13, dynamo=False, simplify=True, **IO)
    yield Case("depthwise", seeded(PadConv, cin=4, cout=4, groups=4), (image(4),), opset=13, dynamo=False,
               simplify=True, **IO)
    yield Case("conv1d", seeded(PadConv, pad=(1, 2), cin=4, cout=8, dim=1), (randn(1, 4, 16),), opset=13,
               dynamo=False, simplify=True, **IO)
    # Near miss: symmetric padding folded into the Conv.
    yield Case("symmetric-near-miss", seeded(PadConv, pad=(1, 1, 1, 1)), (image(),), opset=11, dynamo=False,
               simplify=True, **IO)
