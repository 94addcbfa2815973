"""KB201: MNN's Session API (Interpreter, createSession) cannot run a model whose tensor shapes depend on an
input's values: torch.nonzero, torch.where(cond), x[mask], torch.masked_select, torch.unique export NonZero or
Unique, whose output length is known only once the data is. createSession prints "Interpreter don't support case
for shape compute need input content, please use module api instead" and returns no session (Python raises,
C++ gets a null pointer). The Module API runs the same .mnn file."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class Peaks(nn.Module):
    """A heatmap head: Conv, sigmoid, then the coordinates of the cells above a threshold, torch.nonzero (as
    keypoint and CenterNet-style decoders do); `how` picks another way to select."""

    def __init__(self, how="nonzero", t=0.5):
        super().__init__()
        self.conv = nn.Conv2d(3, 2, 3, padding=1)
        self.how, self.t = how, t

    def forward(self, x):
        heat = torch.sigmoid(self.conv(x))
        keep = heat > self.t
        if self.how == "nonzero":
            return torch.nonzero(keep).float()
        if self.how == "where":  # torch.where with one argument: the indices, one tensor per axis
            return torch.stack(torch.where(keep)).float()
        if self.how == "mask":  # the scores themselves, by a boolean mask
            return heat[keep]
        if self.how == "masked-select":
            return torch.masked_select(heat, keep)
        if self.how == "dense":  # a near miss: the same selection as a dense map, shapes fixed
            return torch.where(keep, heat, torch.zeros_like(heat))
        if self.how == "topk":  # a near miss: a fixed number of best cells
            return torch.topk(heat.flatten(1), 5).values
        raise ValueError(self.how)


class Labels(nn.Module):
    """The distinct values of a quantised map: torch.unique(torch.round(conv(x)))."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, x):
        return torch.unique(torch.floor(self.conv(x) * 2))


def image(seed=1, n=1):
    return randn(n, 3, 8, 8, seed=seed)


def cases():
    x = image()
    yield Case("nonzero", seeded(Peaks), (x,), ["x"], ["y"], opset=17, dynamo=False,
               ways=["opset11", "opset13", "dynamo", "opset17-onnxsim"])
    yield Case("mask", seeded(Peaks, how="mask"), (x,), ["x"], ["y"], opset=17, dynamo=False)
    # Control: the same selection kept as a dense map (Where), whose shape is the input's.
    yield Case("dense", seeded(Peaks, how="dense"), (x,), ["x"], ["y"], opset=17, dynamo=False, trigger=False)


def variants():
    x = image()
    yield Case("where-one-argument", seeded(Peaks, seed=3, how="where"), (x,), ["x"], ["y"], opset=17,
               dynamo=False)
    yield Case("masked-select", seeded(Peaks, seed=3, how="masked-select"), (x,), ["x"], ["y"], opset=17,
               dynamo=False)
    yield Case("mask-dynamo", seeded(Peaks, seed=3, how="mask"), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("nonzero-batch2", seeded(Peaks, seed=3), (image(n=2),), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("unique", seeded(Labels, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False)
    # Near misses: shapes that follow from the input's shape alone.
    yield Case("dense-near-miss", seeded(Peaks, seed=3, how="dense"), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("topk-near-miss", seeded(Peaks, seed=3, how="topk"), (x,), ["x"], ["y"], opset=17, dynamo=False)
