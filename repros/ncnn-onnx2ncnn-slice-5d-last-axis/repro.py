"""KB171: onnx2ncnn holds a 5-D tensor as a 3-D ncnn blob (two axes merged) and writes an ONNX Slice on axis 4
(a YOLO head's y[..., 0:2] on its (1, 3, ny, nx, no) tensor) as a Crop on ncnn axis 3, past the blob's last
axis, after printing 'Unsupported slice axes !': ncnn leaves the blob uncut, so the decoded output has other
shapes than torch's. A slice on axis 3 becomes a crop of a merged axis, silently (Tencent/ncnn#3202)."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

IO = dict(input_names=["in0"])


class Head(nn.Module):
    """A YOLOv5 detection head on one level: a 1x1 conv to 3 anchors x 8 values (xywh, objectness, 3 classes),
    view to (1, 3, 8, 4, 5), permute to (1, 3, 4, 5, 8), sigmoid, and the decode step that slices the last axis
    (xy, wh, the rest), then one row per box. `how` names the slice."""

    def __init__(self, how="yolo"):
        super().__init__()
        self.conv, self.how = nn.Conv2d(3, 24, 1), how

    def forward(self, x):
        y = self.conv(x)
        if self.how.startswith("view"):  # a plain view to (1, 3, 4, 5, 8), no permute
            y = y.view(1, 3, 4, 5, 8).sigmoid()
        else:
            y = y.view(1, 3, 8, 4, 5).permute(0, 1, 3, 4, 2).sigmoid()
        if self.how == "flat-4d":  # the workaround: merge the grid axes, slice a 4-D tensor's last axis
            y = y.reshape(1, 3, 20, 8)
        if self.how in ("yolo", "flat-4d", "view-last"):  # YOLOv5's decode (grid and anchors left out)
            xy = y[..., 0:2] * 2 - 0.5
            wh = y[..., 2:4] * 2
            y = torch.cat((xy, wh * wh, y[..., 4:]), -1)
        elif self.how == "boxes-only":  # y[..., :4], the boxes alone
            y = y[..., :4] * 4
        elif self.how == "view-dim3":  # a slice on dim 3 of the 5-D tensor
            y = y[:, :, :, 1:4] * 2
        elif self.how == "view-dim2-near-miss":
            y = y[:, :, 1:3] * 2
        elif self.how == "view-dim1-near-miss":
            y = y[:, 1:] * 2
        return y.reshape(1, -1, y.shape[-1])


def cases():
    x = randn(1, 3, 4, 5)
    yield Case("yolo-decode", seeded(Head), (x,), opset=11, dynamo=False, ways=True, **IO)
    yield Case("flat-4d", seeded(Head, "flat-4d"), (x,), opset=11, dynamo=False, trigger=False,
               rewrites="yolo-decode", **IO)


def variants():
    x = randn(1, 3, 4, 5, seed=2)
    yield Case("boxes-only", seeded(Head, "boxes-only"), (x,), opset=11, dynamo=False, **IO)
    yield Case("view-last", seeded(Head, "view-last"), (x,), opset=11, dynamo=False, **IO)
    yield Case("view-dim3", seeded(Head, "view-dim3"), (x,), opset=11, dynamo=False, **IO)
    yield Case("view-dim2-near-miss", seeded(Head, "view-dim2-near-miss"), (x,), opset=11, dynamo=False, **IO)
    yield Case("view-dim1-near-miss", seeded(Head, "view-dim1-near-miss"), (x,), opset=11, dynamo=False, **IO)
    yield Case("flat-4d-near-miss", seeded(Head, "flat-4d"), (x,), opset=13, dynamo=False, **IO)
