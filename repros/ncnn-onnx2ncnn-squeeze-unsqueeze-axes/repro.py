"""known-bug: Tencent/ncnn#2331, Tencent/ncnn#4694 -- onnx2ncnn reads Squeeze / Unsqueeze axes only from the attribute.
Up to opset 12 it prints "Unsupported squeeze axes !" for axis 0 and shifts every later axis by one; from opset 13
(axes as an input) it wires the axes as a second blob, and ncnn refuses to load the layer."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case

K, H, W = 4, 3, 5  # classes, height, width


class SegHead(nn.Module):
    """A segmentation head that drops the batch axis and takes the class softmax over dim 0."""

    def __init__(self, squeeze=True, op="softmax"):
        super().__init__()
        self.conv = nn.Conv2d(3, K, 1)
        self.squeeze, self.op = squeeze, op

    def forward(self, x):
        y = self.conv(x)
        if not self.squeeze:  # the workaround: keep the batch axis, the class axis is 1
            return F.softmax(y, dim=1)
        y = y.squeeze(0)
        if self.op == "softmax":
            return F.softmax(y, dim=0)
        if self.op == "transpose":
            return y.transpose(0, 1)
        return y * 2.0  # elementwise only


class Unsqueeze(nn.Module):
    """Unsqueeze(0) then an op with an axis."""

    def __init__(self, op="softmax"):
        super().__init__()
        self.op = op

    def forward(self, x):
        y = x.unsqueeze(0)
        return F.softmax(y, dim=1) if self.op == "softmax" else y + 1.0


class SqueezeMiddle(nn.Module):
    """A CRNN-style head: (1, C, 1, W) -> squeeze the height axis -> (1, C, W); or the same with reshape."""

    def __init__(self, reshape=False):
        super().__init__()
        self.conv = nn.Conv2d(3, K, (H, 1))
        self.reshape = reshape

    def forward(self, x):
        y = self.conv(x)
        y = y.reshape(1, K, W) if self.reshape else y.squeeze(2)
        return F.softmax(y, dim=1)


class CrnnHead(nn.Module):
    """A CRNN-style head: conv to (1, C, 1, W), squeeze the height axis, then a Conv1d over the sequence."""

    def __init__(self):
        super().__init__()
        self.conv, self.seq = nn.Conv2d(3, 8, (H, 1)), nn.Conv1d(8, K, 1)

    def forward(self, x):
        return self.seq(torch.relu(self.conv(x)).squeeze(2))


class DeepCrnn(nn.Module):
    """A deeper CRNN-style head: four 3x3 convs (3-32-32-64-64), a conv over the height, squeeze(2), Conv1d.
    About 70k weights after the axes constant, where CrnnHead has about 120."""

    def __init__(self, widths=(3, 32, 32, 64, 64), height=8):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(a, b, 3, padding=1) for a, b in zip(widths[:-1], widths[1:]))
        self.height = nn.Conv2d(widths[-1], widths[-1], (height, 1))
        self.seq = nn.Conv1d(widths[-1], 10, 1)

    def forward(self, x):
        for conv in self.convs:
            x = torch.relu(conv(x))
        return self.seq(torch.relu(self.height(x)).squeeze(2))


def head(**kw):
    torch.manual_seed(0)
    return SegHead(**kw)


def image():
    torch.manual_seed(0)
    return torch.randn(1, 3, H, W)


def cases():
    io = dict(input_names=["in0"], output_names=["out0"])
    model = head()
    yield Case("squeeze-opset13", model, (image(),), opset=13, dynamo=False, torchscript=True, **io)
    yield Case("squeeze-opset11", model, (image(),), opset=11, dynamo=False, **io)
    # The same conv, squeeze(0), then elementwise only: the weights alone (no axis op after the Squeeze).
    yield Case("squeeze-mul-opset13", head(op="mul"), (image(),), opset=13, dynamo=False, **io)
    # Two weighted layers, one after the Squeeze's axes constant and one after that.
    torch.manual_seed(0)
    yield Case("crnn-squeeze-opset13", CrnnHead(), (image(),), opset=13, dynamo=False, **io)
    torch.manual_seed(0)
    deep = DeepCrnn()
    torch.manual_seed(0)
    yield Case("deep-crnn-squeeze-opset13", deep, (torch.randn(1, 3, 8, 16),), opset=13, dynamo=False, **io)
    # The workaround: the same conv weights, the softmax on the batched tensor (class axis 1), same input.
    keep = head(squeeze=False)
    keep.conv = model.conv
    yield Case("keep-batch-axis", keep, (image(),), opset=13, dynamo=False, trigger=False,
               rewrites="squeeze-opset13", **io)
    # Control: the same head without any Squeeze, at opset 11.
    yield Case("no-squeeze-opset11", keep, (image(),), opset=11, dynamo=False, trigger=False, **io)


def variant(name, module, shape=(1, 3, H, W), opset=13, dynamo=False, **kw):
    torch.manual_seed(1)
    return Case(name, module, (torch.randn(*shape),), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    yield variant("squeeze-opset17", head(), opset=17)
    yield variant("squeeze-dynamo", head(), opset=18, dynamo=True, export_kwargs={"external_data": False})
    yield variant("squeeze-onnxsim", head(), simplify=True)
    yield variant("squeeze-middle-opset13", SqueezeMiddle())
    yield variant("unsqueeze-opset13", Unsqueeze(op="add"), shape=(1, K, H, W))
    yield variant("squeeze-softmax-opset11", head(), opset=11)
    yield variant("squeeze-transpose-opset11", head(op="transpose"), opset=11)
    yield variant("unsqueeze-softmax-opset11", Unsqueeze(), shape=(1, K, H, W), opset=11)
    yield variant("squeeze-elementwise-opset11-near-miss", head(op="mul"), opset=11)
    yield variant("squeeze-middle-opset11-near-miss", SqueezeMiddle(), opset=11)
    yield variant("reshape-opset13-near-miss", SqueezeMiddle(reshape=True))
