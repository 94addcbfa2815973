"""KB169: onnx2ncnn holds a 5-D tensor as a 3-D ncnn blob (the last two axes merged, or the grid axes merged
before a YOLO head's permute) and writes an ONNX Split on axis 3 or 4 as a Slice on ncnn axis 2 or 3 of that
blob: axis 3 is past the blob's rank and ncnn dies of SIGSEGV; axis 2 cuts the merged axis, so the pieces have
other shapes than torch's (Tencent/ncnn#3012)."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

IO = dict(input_names=["in0"])


class Head(nn.Module):
    """A YOLO detection head: a 1x1 conv to 3 anchors x 8 values, view to 5-D, and the split of the
    decode step: xy, wh, objectness and class scores. `how` names where the 5-D tensor is split."""

    def __init__(self, how="yolo", sizes=(2, 2, 1, 3)):
        super().__init__()
        self.conv, self.how, self.sizes = nn.Conv2d(3, 24, 1), how, list(sizes)

    def forward(self, x):
        y = self.conv(x)
        if self.how == "yolo":  # (1, 3, 8, 4, 5) -> (1, 3, 4, 5, 8), split the last axis
            parts = torch.split(y.view(1, 3, 8, 4, 5).permute(0, 1, 3, 4, 2), self.sizes, dim=4)
        elif self.how == "sigmoid-first":
            parts = torch.split(y.view(1, 3, 8, 4, 5).permute(0, 1, 3, 4, 2).sigmoid(), self.sizes, dim=4)
        elif self.how == "flat-4d":  # the workaround: merge the grid axes first, split a 4-D tensor
            parts = torch.split(y.view(1, 3, 8, 4, 5).permute(0, 1, 3, 4, 2).reshape(1, 3, 20, 8), self.sizes, dim=3)
        else:  # "view-dim<k>": a plain view to (1, 3, 4, 5, 8), split on dim k
            parts = torch.split(y.view(1, 3, 4, 5, 8), self.sizes, dim=int(self.how[-1]))
        # the decode step, then each piece flattened per anchor, as a detector's output is
        return tuple((p * (i + 1)).reshape(1, p.shape[1], -1) for i, p in enumerate(parts))


def cases():
    x = randn(1, 3, 4, 5)
    yield Case("yolo-split", seeded(Head), (x,), opset=11, dynamo=False,
               output_names=["out0", "out1", "out2", "out3"], **IO)
    yield Case("flat-4d", seeded(Head, "flat-4d"), (x,), opset=11, dynamo=False, trigger=False,
               rewrites="yolo-split", output_names=["out0", "out1", "out2", "out3"], **IO)


def variants():
    x = randn(1, 3, 4, 5, seed=2)
    yield Case("yolo-split-opset9", seeded(Head), (x,), opset=9, dynamo=False,
               output_names=["out0", "out1", "out2", "out3"], **IO)
    yield Case("yolo-split-opset10", seeded(Head), (x,), opset=10, dynamo=False,
               output_names=["out0", "out1", "out2", "out3"], **IO)
    yield Case("sigmoid-first", seeded(Head, "sigmoid-first"), (x,), opset=11, dynamo=False,
               output_names=["out0", "out1", "out2", "out3"], **IO)
    yield Case("view-dim4", seeded(Head, "view-dim4", (5, 3)), (x,), opset=11, dynamo=False,
               output_names=["out0", "out1"], **IO)
    yield Case("view-dim3", seeded(Head, "view-dim3", (2, 3)), (x,), opset=11, dynamo=False,
               output_names=["out0", "out1"], **IO)
    yield Case("view-dim2-near-miss", seeded(Head, "view-dim2", (1, 3)), (x,), opset=11, dynamo=False,
               output_names=["out0", "out1"], **IO)
    yield Case("view-dim1-near-miss", seeded(Head, "view-dim1", (1, 2)), (x,), opset=11, dynamo=False,
               output_names=["out0", "out1"], **IO)
    yield Case("flat-4d-near-miss", seeded(Head, "flat-4d"), (x,), opset=10, dynamo=False,
               output_names=["out0", "out1", "out2", "out3"], **IO)
