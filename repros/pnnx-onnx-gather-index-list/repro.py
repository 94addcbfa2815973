"""known-bug: a Gather with a constant list of indices on a feature map (torch.index_select(y, 1, idx), y[:, [0, 2, 5]]),
converted by pnnx from ONNX: pnnx reads it as Tensor.select with index=(0,2,5), and the ncnn Crop and Squeeze it
writes take one channel, so ncnn returns an (8, 8) map where torch gives (3, 8, 8)."""

import torch
from torch import nn

from kb.blocks import seeded
from kb.export import Case

IDX = [0, 2, 5]


class Pick(nn.Module):
    """A Conv2d, then some channels (or rows, columns) of its output picked by a constant index list.

    how="index_select": torch.index_select(y, dim, idx); "advanced": y[:, idx]; "scalar": y[:, idx[0]];
    "slice": y[:, idx[0]:idx[-1] + 1]; "cat": the workaround, torch.cat of one-wide slices.
    """

    def __init__(self, idx=IDX, dim=1, how="index_select"):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.register_buffer("idx", torch.tensor(idx))
        self.list, self.dim, self.how = list(idx), dim, how

    def forward(self, x):
        y = self.conv(x)
        if self.how == "advanced":
            return y[:, self.list]
        if self.how == "scalar":
            return y[:, self.list[0]]
        if self.how == "slice":
            return y[:, self.list[0]:self.list[-1] + 1]
        if self.how == "cat":
            return torch.cat([y[(slice(None),) * self.dim + (slice(i, i + 1),)] for i in self.list], self.dim)
        return torch.index_select(y, self.dim, self.idx)


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, 3, 8, 8)
    io = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("index-select", seeded(lambda: Pick()), (x,), **io)
    # The workaround: the same weights, the channels picked with one-wide slices and concatenated.
    yield Case("slices-cat", seeded(lambda: Pick(how="cat")), (x,), trigger=False, rewrites="index-select", **io)
    # Control: one channel picked with a scalar index (a Gather with a scalar index, which pnnx converts).
    yield Case("scalar-index", seeded(lambda: Pick(how="scalar")), (x,), trigger=False, **io)


def variant(name, module, x, opset=17, dynamo=False, **kw):
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    torch.manual_seed(1)
    x = torch.randn(1, 3, 8, 8)
    pick = seeded(lambda: Pick())
    yield variant("channels-opset17", pick, x)
    yield variant("channels-opset13", pick, x, opset=13)
    yield variant("channels-dynamo", pick, x, opset=18, dynamo=True, export_kwargs={"external_data": False})
    yield variant("channels-onnxsim", pick, x, simplify=True)
    yield variant("channels-contiguous", seeded(lambda: Pick(idx=[2, 3, 4])), x)
    yield variant("channels-unsorted", seeded(lambda: Pick(idx=[5, 1, 3])), x)
    yield variant("channels-advanced-index", seeded(lambda: Pick(how="advanced")), x)
    yield variant("rows", seeded(lambda: Pick(idx=[1, 4, 6], dim=2)), x)
    yield variant("columns", seeded(lambda: Pick(idx=[0, 7], dim=3)), x)
    # Near misses: a scalar index, a slice, and the workaround, which pnnx converts.
    yield variant("scalar-index-near-miss", seeded(lambda: Pick(how="scalar")), x)
    yield variant("slice-near-miss", seeded(lambda: Pick(idx=[2, 3, 4], how="slice")), x)
    yield variant("slices-cat-near-miss", seeded(lambda: Pick(how="cat")), x)
