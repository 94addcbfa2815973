"""KB183: a split into one section (x.split([c], dim) with c the whole axis: a 1-tuple) traced and converted by
pnnx: the generated *_pnnx.py assigns the tuple torch.split returns and then uses it as the tensor the model
indexed out of it (Tencent/ncnn#5356, YOLOv9's CBLinear and CBFuse)."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class CBLinear(nn.Module):
    """YOLOv9's CBLinear: a 1x1 conv whose output is split into sections c2s along the channels."""

    def __init__(self, c1, c2s):
        super().__init__()
        self.c2s = c2s
        self.conv = nn.Conv2d(c1, sum(c2s), 1)

    def forward(self, x):
        return self.conv(x).split(self.c2s, dim=1)


class OneSection(nn.Module):
    """CBLinear with the sections `c2s`, the first section (outs[0]) then `after`."""

    def __init__(self, c2s=(16,), after="relu", how="split"):
        super().__init__()
        self.cb = CBLinear(3, list(c2s))
        self.other = nn.Conv2d(3, 16, 3, 2, 1)
        self.after, self.how = after, how

    def forward(self, x):
        if self.how == "split":
            outs = self.cb(x)
        elif self.how == "split-int":
            outs = self.cb.conv(x).split(16, dim=1)
        elif self.how == "tuple":  # the workaround: no split where there is one section
            y = self.cb.conv(x)
            outs = y.split(self.cb.c2s, dim=1) if len(self.cb.c2s) > 1 else (y,)
        y = outs[0]
        if self.after == "relu":
            return torch.relu(y) + 1
        if self.after == "cbfuse":  # YOLOv9's CBFuse: resize to the other branch, stack, sum
            z = self.other(x)
            r = F.interpolate(y, size=z.shape[2:], mode="nearest")
            return torch.sum(torch.stack([r, z]), dim=0)
        if self.after == "add-last":
            return y + outs[-1] if len(outs) > 1 else y * 2
        if self.after == "sigmoid-mul":
            return y * torch.sigmoid(y)
        if self.after == "maxpool":
            return F.max_pool2d(y, 2)
        if self.after == "cat":
            return torch.cat([y, x], dim=1)
        raise ValueError(self.after)


def cases():
    x = randn(1, 3, 16, 16)
    yield Case("one-section", seeded(OneSection), (x,), opset=13, dynamo=False, torchscript=True)
    yield Case("one-section-tuple", seeded(OneSection, how="tuple"), (x,), opset=13, dynamo=False, torchscript=True,
               trigger=False, rewrites="one-section")
    yield Case("two-sections", seeded(OneSection, c2s=(8, 8), after="add-last"), (x,), opset=13, dynamo=False,
               torchscript=True, trigger=False)


def variants():
    x = randn(1, 3, 16, 16, seed=2)
    yield Case("cbfuse", seeded(OneSection, after="cbfuse", seed=2), (x,), opset=13, dynamo=False, torchscript=True)
    yield Case("sigmoid-mul", seeded(OneSection, after="sigmoid-mul", seed=2), (x,), opset=13, dynamo=False,
               torchscript=True)
    yield Case("cat", seeded(OneSection, after="cat", seed=2), (x,), opset=13, dynamo=False, torchscript=True)
    yield Case("maxpool", seeded(OneSection, after="maxpool", seed=2), (x,), opset=13, dynamo=False, torchscript=True)
    yield Case("split-int", seeded(OneSection, how="split-int", seed=2), (x,), opset=13, dynamo=False,
               torchscript=True)
    yield Case("cbfuse-wide", seeded(OneSection, after="cbfuse", seed=3), (randn(1, 3, 32, 24, seed=3),), opset=13,
               dynamo=False, torchscript=True)
    # Near misses: two sections (the tuple is unpacked), and the workaround's form.
    yield Case("two-sections-near-miss", seeded(OneSection, c2s=(8, 8), after="add-last", seed=2), (x,), opset=13,
               dynamo=False, torchscript=True)
    yield Case("cbfuse-two-sections-near-miss", seeded(OneSection, c2s=(16, 8), after="cbfuse", seed=2), (x,),
               opset=13, dynamo=False, torchscript=True)
    yield Case("tuple-near-miss", seeded(OneSection, how="tuple", seed=2), (x,), opset=13, dynamo=False,
               torchscript=True)
