"""known-bug: Tencent/ncnn#4481 -- a Slice on the first axis (x[6:9] of a 2-D tensor, x[1:3] of a batch) becomes an
ncnn Crop with no starts and no ends, and ncnn crashes running it."""

import torch
from torch import nn

from kb.export import Case


class Slice(nn.Module):
    """x[...] with the slice on one axis or more, between two adds (as in the #4481 report)."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind

    def forward(self, x):
        x = x + 1
        if self.kind == "2d":  # Tencent/ncnn#4481: rows 6:9, columns 6:8 of a 10 x 10 tensor
            y = x[6:9, 6:8]
        elif self.kind == "rows":  # the first axis alone
            y = x[6:9]
        elif self.kind == "batch":  # some samples of a batch
            y = x[1:3]
        elif self.kind == "keep-first":  # x[:1] of a batch of one: a no-op in torch
            y = x[:1]
        elif self.kind == "groups":  # a reshape that puts a group axis first, then one group
            y = x.reshape(2, 3, 8, 8)[1:]
        elif self.kind == "channels":  # near miss: channels 2:5
            y = x[:, 2:5]
        elif self.kind == "crop-hw":  # near miss: a spatial crop with negative ends
            y = x[:, :, 1:-1, 1:-1]
        elif self.kind == "tokens":  # near miss: drop the class token, x[:, 1:] of (batch, tokens, dim)
            y = x[:, 1:]
        elif self.kind == "last-axis":  # near miss: SSD's box decoding slices the last axis, x[..., :2]
            y = x[..., :2] * x[..., 2:]
        else:
            raise ValueError(self.kind)
        return y + 1


class FirstImage(nn.Module):
    """A realistic block: a conv head run on the first image of the batch (x[:1]), then ReLU."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x[:1]))


def cases():
    torch.manual_seed(0)
    io = dict(input_names=["in0"], output_names=["out0"])
    yield Case("slice-2d", Slice("2d"), (torch.randn(10, 10),), opset=13, dynamo=False, torchscript=True, **io)
    yield Case("slice-rows", Slice("rows"), (torch.randn(10, 10),), opset=13, dynamo=False, **io)
    # Control on the same path: a slice on channels, not on the first axis.
    yield Case("slice-channels", Slice("channels"), (torch.randn(1, 8, 4, 4),), opset=13, dynamo=False,
               trigger=False, **io)


def variant(name, kind, shape, opset=13, dynamo=False, module=None, **kw):
    torch.manual_seed(1)
    return Case(name, module or Slice(kind), (torch.randn(*shape),), ["in0"], ["out0"], opset=opset, dynamo=dynamo,
                **kw)


def variants():
    yield variant("slice-2d-opset13", "2d", (10, 10))
    yield variant("slice-2d-opset17", "2d", (10, 10), opset=17)
    yield variant("slice-2d-dynamo", "2d", (10, 10), opset=18, dynamo=True, export_kwargs={"external_data": False})
    yield variant("slice-2d-onnxsim", "2d", (10, 10), simplify=True)
    yield variant("batch", "batch", (4, 3, 8, 8))
    yield variant("keep-first", "keep-first", (1, 3, 8, 8))
    yield variant("groups", "groups", (1, 6, 8, 8))
    torch.manual_seed(2)
    yield variant("first-image-block", None, (1, 3, 8, 8), module=FirstImage())
    yield variant("channels-near-miss", "channels", (1, 8, 4, 4))
    yield variant("crop-hw-near-miss", "crop-hw", (1, 3, 8, 8))
    yield variant("tokens-near-miss", "tokens", (1, 10, 16))
    yield variant("last-axis-near-miss", "last-axis", (1, 12, 4))
