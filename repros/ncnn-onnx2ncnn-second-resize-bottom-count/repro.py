"""KB239: two Resize nodes with sizes (opset 13+: roi and scales left as empty names) -> onnx2ncnn writes the second
as `Interp ... -1 1`. A DeepLabV3+ decoder: the ASPP output up to the low-level feature's size, then up to the
input's size."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import randn
from kb.export import Case

X, LOW = (1, 2, 8, 8), (1, 2, 16, 16)  # the ASPP output and the low-level feature (4x in DeepLabV3+; 2x here)


class Decoder(nn.Module):
    def __init__(self, first="size", second="size", mode="bilinear", between="add", resizes=2):
        super().__init__()
        self.first, self.second, self.mode, self.between, self.resizes = first, second, mode, between, resizes
        self.conv = nn.Conv2d(4, 2, 3, padding=1)

    def up(self, t, how, size):
        corners = {"align_corners": True} if self.mode == "bilinear" else {}
        if how == "size":
            return F.interpolate(t, size=size, mode=self.mode, **corners)
        return F.interpolate(t, scale_factor=2, mode=self.mode, **corners)

    def forward(self, x, low):
        y = self.up(x, self.first, low.shape[2:])  # F.interpolate(x, size=low.shape[2:], ...)
        if self.resizes == 1:
            return y + low
        y = torch.relu(self.conv(torch.cat([y, low], 1))) if self.between == "concat-conv" else y + low
        y = self.up(y, self.second, (32, 32))
        if self.resizes == 3:
            y = self.up(y, self.second, (64, 64))
        return y


def cases():
    torch.manual_seed(0)
    x, low = randn(*X, seed=1), randn(*LOW, seed=2)
    net = Decoder()
    yield Case("size-then-size", net, (x, low), opset=13, dynamo=False, simplify=True, torchscript=True,
               ways=["opset13", "opset17", "opset17-onnxsim", "dynamo", "dynamo-onnxsim"])
    # Workarounds: the same module (same weights) written or exported so that no Resize has an empty-named input.
    yield Case("scale-factors", Decoder("scale", "scale"), (x, low), opset=13, dynamo=False, simplify=True,
               trigger=False, rewrites="size-then-size")
    yield Case("opset11-onnxsim", net, (x, low), opset=11, dynamo=False, simplify=True, trigger=False,
               rewrites="size-then-size")


def variant(name, module, opset=13, dynamo=False, simplify=True, **kw):
    torch.manual_seed(0)
    return Case(name, module, (randn(*X, seed=2), randn(*LOW, seed=3)), opset=opset, dynamo=dynamo,
                simplify=simplify, export_kwargs={"external_data": False} if dynamo else {}, **kw)


def variants():
    yield variant("nearest-size-then-size", Decoder(mode="nearest"))
    yield variant("concat-conv-between", Decoder(between="concat-conv"), opset=17)
    yield variant("three-resizes", Decoder(resizes=3))
    yield variant("size-then-scale", Decoder("size", "scale"))
    yield variant("one-resize-near-miss", Decoder(resizes=1))
    yield variant("scale-then-size-near-miss", Decoder("scale", "size"))
    yield variant("scale-then-scale-near-miss", Decoder("scale", "scale"), opset=17)
    yield variant("scale-then-scale-dynamo-near-miss", Decoder("scale", "scale"), opset=18, dynamo=True, simplify=False)
    yield variant("opset12-onnxsim-near-miss", Decoder(), opset=12)
