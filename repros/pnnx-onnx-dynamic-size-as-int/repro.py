"""KB185 (pnnx/pnnx#239): a size read from a tensor's shape (x.shape[3]) and put into the sizes of an expand, a
zeros, a repeat or an interpolate, exported to ONNX with dynamic axes and converted by pnnx with inputshape2=: the
*_pnnx.py pnnx writes reads the size as a Python int (v.size(3)) and then uses it as a tensor (torch.cat, unsqueeze)."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

# Height and width dynamic, as an OCR recogniser's or a detector's input is; pnnx is given a wider second shape.
DYNAMIC = {"dynamic_axes": {"in0": {2: "h", 3: "w"}}}


class SizeFromShape(nn.Module):
    """A conv, then `op`, whose sizes come from the conv output's shape."""

    def __init__(self, op="expand"):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, 1, 1)
        self.bias = nn.Parameter(torch.randn(1, 8, 1, 1))
        self.op = op

    def forward(self, x):
        y, op = self.conv(x), self.op
        if op == "expand":  # a learned bias broadcast to the feature map's size, written out
            return self.bias.expand(y.shape[0], 8, y.shape[2], y.shape[3]) + y
        if op == "expand-shape":
            return self.bias.expand(y.shape) + y
        if op == "expand-w":  # only the width read from the shape
            return self.bias.expand(1, 8, 8, y.shape[3]) + y
        if op == "zeros":
            return torch.zeros(y.shape[0], 8, y.shape[2], y.shape[3]) + y
        if op == "new-zeros":
            return y.new_zeros(y.shape[0], 8, y.shape[2], y.shape[3]) + y * 2
        if op == "pos-embed":  # tokens, then a position embedding expanded to the token count
            t = y.flatten(2).transpose(1, 2)
            return t + self.bias.view(1, 1, 8).expand(1, t.shape[1], 8)
        if op == "repeat":
            return y + self.bias.repeat(1, 1, y.shape[2], y.shape[3])
        if op == "interpolate":
            return F.interpolate(y, size=(y.shape[2] * 2, y.shape[3] * 2))
        # Near misses: sizes read from the shape that pnnx writes as a list, or a Range.
        if op == "tokens-back":  # tokens and back, reshape(-1, c, h, w)
            b, c, h, w = y.shape
            return (y.flatten(2).transpose(1, 2) * 2).transpose(1, 2).reshape(-1, c, h, w)
        if op == "view-size":
            return y.view(y.size(0), y.size(1), -1).relu()
        if op == "arange":
            return y + torch.arange(y.shape[3]).float()
        raise ValueError(op)


def cases():
    x = randn(1, 3, 8, 16)
    yield Case("expand", seeded(SizeFromShape), (x,), opset=13, dynamo=False, torchscript=True,
               export_kwargs=DYNAMIC)


def variants():
    x = randn(1, 3, 8, 16, seed=2)
    yield Case("expand-opset11", seeded(SizeFromShape, seed=2), (x,), opset=11, dynamo=False, export_kwargs=DYNAMIC)
    yield Case("expand-opset17", seeded(SizeFromShape, seed=2), (x,), opset=17, dynamo=False, export_kwargs=DYNAMIC)
    yield Case("expand-shape", seeded(SizeFromShape, "expand-shape", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
    yield Case("expand-w", seeded(SizeFromShape, "expand-w", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
    yield Case("zeros", seeded(SizeFromShape, "zeros", seed=2), (x,), opset=13, dynamo=False, export_kwargs=DYNAMIC)
    yield Case("new-zeros", seeded(SizeFromShape, "new-zeros", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
    yield Case("pos-embed", seeded(SizeFromShape, "pos-embed", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
    yield Case("repeat", seeded(SizeFromShape, "repeat", seed=2), (x,), opset=13, dynamo=False, export_kwargs=DYNAMIC)
    yield Case("interpolate", seeded(SizeFromShape, "interpolate", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
    yield Case("tokens-back-near-miss", seeded(SizeFromShape, "tokens-back", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
    yield Case("view-size-near-miss", seeded(SizeFromShape, "view-size", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
    yield Case("arange-near-miss", seeded(SizeFromShape, "arange", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
