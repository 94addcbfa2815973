"""KB104: a model that returns the same tensor twice, returns its input, or returns a buffer exports an ONNX Identity
node for that output (both exporters; onnxsim keeps it). onnx2ncnn has no rule for Identity: it prints
"Identity not supported yet!" and writes an Identity layer, which ncnn does not have, so the model does not load.
"""

import torch
from torch import nn

from kb.export import Case

IO2 = dict(input_names=["in0"], output_names=["out0", "out1"])
INLINE = {"external_data": False}  # dynamo exports: weights inside the .onnx (not ncnn-onnx2ncnn-external-data)


class Backbone(nn.Module):
    """conv-relu, then a 1x1 conv; `returns` says which two tensors it hands back."""

    def __init__(self, returns="twice"):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Conv2d(8, 4, 1)
        self.register_buffer("anchors", torch.linspace(-1, 1, 4))
        self.returns = returns

    def forward(self, x):
        f = torch.relu(self.conv(x))
        if self.returns == "twice":  # the same feature map for two consumers (a neck and an auxiliary head)
            return f, f
        if self.returns == "identity-module":  # near miss: an nn.Identity between the layers (no node is written)
            return f, self.head(nn.Identity()(f))
        if self.returns == "input":  # the (preprocessed) input handed back beside the result
            return x, self.head(f)
        if self.returns == "buffer":  # a registered buffer (anchors, a class table) returned as it is
            return self.head(f), self.anchors
        if self.returns == "distinct":  # control: two different tensors
            return f, self.head(f)
        raise ValueError(self.returns)


class TwiceNoop(Backbone):
    """The twice model with its second output computed by an op onnx2ncnn converts: f * 1 is folded away, so a
    ReLU of the (already non-negative) feature: the same values, and no Identity."""

    def forward(self, x):
        f = torch.relu(self.conv(x))
        return f, torch.relu(f)


def model(cls=Backbone, seed=0, **kw):
    torch.manual_seed(seed)
    return cls(**kw)


def image(seed=1):
    torch.manual_seed(seed)
    return torch.randn(1, 3, 12, 12)


def cases():
    x = image()
    yield Case("twice", model(), (x,), opset=13, dynamo=False, torchscript=True, **IO2)
    yield Case("twice-relu", model(TwiceNoop), (x,), opset=13, dynamo=False, trigger=False, rewrites="twice", **IO2)
    yield Case("distinct", model(returns="distinct"), (x,), opset=13, dynamo=False, trigger=False, **IO2)


def variants():
    x = image(2)
    yield Case("twice-opset11", model(seed=3), (x,), opset=11, dynamo=False, **IO2)
    yield Case("twice-opset13", model(seed=3), (x,), opset=13, dynamo=False, **IO2)
    yield Case("twice-opset17", model(seed=3), (x,), opset=17, dynamo=False, **IO2)
    yield Case("twice-onnxsim", model(seed=3), (x,), opset=13, dynamo=False, simplify=True, **IO2)
    yield Case("twice-dynamo", model(seed=3), (x,), opset=18, dynamo=True, export_kwargs=INLINE, **IO2)
    yield Case("input", model(seed=3, returns="input"), (x,), opset=13, dynamo=False, **IO2)
    yield Case("input-dynamo", model(seed=3, returns="input"), (x,), opset=18, dynamo=True, export_kwargs=INLINE, **IO2)
    yield Case("buffer", model(seed=3, returns="buffer"), (x,), opset=13, dynamo=False, **IO2)
    # Near misses: distinct outputs, from either exporter; an nn.Identity module inside the model.
    yield Case("distinct-near-miss", model(seed=3, returns="distinct"), (x,), opset=13, dynamo=False, **IO2)
    yield Case("distinct-dynamo-near-miss", model(seed=3, returns="distinct"), (x,), opset=18, dynamo=True,
               export_kwargs=INLINE, **IO2)
    yield Case("identity-module-near-miss", model(seed=3, returns="identity-module"), (x,), opset=13, dynamo=False,
               **IO2)
