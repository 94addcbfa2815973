"""KB164 (pnnx/pnnx#52's second model): slice bounds computed from an input's length (x.shape[2]), converted by pnnx
for dynamic shapes (inputshape2=): pnnx writes the shape arithmetic as a pnnx.Expression layer, which ncnn cannot
load."""

import torch
from torch import nn

from kb.blocks import randn
from kb.export import Case

# Both inputs vary along axis 2, as the thread's sequences do; pnnx is given a second shape (inputshape2=).
DYNAMIC = {"dynamic_axes": {"in0": {2: "t0"}, "in1": {2: "t1"}}}
IO = dict(input_names=["in0", "in1"], dynamo=False)


class CatSlice(nn.Module):
    """pnnx/pnnx#52's second model: concatenate two sequences, then cut them apart again by their lengths."""

    def __init__(self, op="thread"):
        super().__init__()
        self.op = op

    def forward(self, x, y):
        t0, t1 = x.shape[2], y.shape[2]
        op = self.op
        if op == "thread":  # as the thread writes it: the first cut is t1 long, the second runs to t0 + t1
            c = torch.cat((x, y), dim=2)
            return c[:, :, 0:t1, :], c[:, :, t1:t0 + t1, :]
        if op == "split":  # the same two cuts as torch.split with sizes from the lengths
            c = torch.cat((x, y), dim=2)
            a, b = torch.split(c, [t1, t0], dim=2)
            return a, b
        if op == "end-other":  # the end is the other input's length
            return x[:, :, :t1, :] * y
        if op == "start-other":  # the start is the other input's length
            return torch.cat((x[:, :, t1:, :], y), 2)
        if op == "half":  # the first half of x, by its own length
            return torch.cat((x[:, :, : t0 // 2, :], y), 2)
        if op == "narrow":
            return torch.cat((x.narrow(2, 0, t1), y), 3)
        if op == "fixed-bounds":  # near miss: constant bounds, a fixed length out
            return torch.cat((x[:, :, 1:3, :], y[:, :, 0:2, :]), 2)
        if op == "cat-only":  # near miss: no slice
            return torch.cat((x, y), 2)
        raise ValueError(op)


def inputs():
    return randn(1, 2, 5, 8), randn(1, 2, 3, 8, seed=2)  # the thread's layout, shorter sequences


def cases():
    yield Case("thread-model", CatSlice(), inputs(), output_names=["out0", "out1"], opset=17, torchscript=True,
               export_kwargs=DYNAMIC, **IO)


def variants():
    yield Case("thread-model-opset13", CatSlice(), inputs(), output_names=["out0", "out1"], opset=13,
               export_kwargs=DYNAMIC, **IO)
    yield Case("thread-model-onnxsim", CatSlice(), inputs(), output_names=["out0", "out1"], opset=17, simplify=True,
               export_kwargs=DYNAMIC, **IO)
    yield Case("split-by-lengths", CatSlice("split"), inputs(), output_names=["out0", "out1"], opset=17,
               export_kwargs=DYNAMIC, **IO)
    yield Case("end-other", CatSlice("end-other"), (randn(1, 2, 5, 8), randn(1, 2, 3, 8, seed=2)), opset=17,
               export_kwargs=DYNAMIC, **IO)
    yield Case("start-other", CatSlice("start-other"), inputs(), opset=17, export_kwargs=DYNAMIC, **IO)
    yield Case("half", CatSlice("half"), inputs(), opset=17, export_kwargs=DYNAMIC, **IO)
    yield Case("narrow", CatSlice("narrow"), inputs(), opset=17, export_kwargs=DYNAMIC, **IO)
    yield Case("fixed-bounds", CatSlice("fixed-bounds"), inputs(), opset=17, export_kwargs=DYNAMIC, **IO)
    yield Case("cat-only", CatSlice("cat-only"), inputs(), opset=17, export_kwargs=DYNAMIC, **IO)
