"""KB211: x.expand_as(y) (an ONNX Shape, then Expand) exported with dynamic axes and converted by pnnx with
inputshape2=: the shape stays a tensor, pnnx's one ONNX Expand rule wants it folded to a constant, and the op is
written through as `Expand`: ncnn has no such layer, and the *_pnnx.py calls an undefined Expand()."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

# Height and width dynamic; pnnx is given a second, wider shape (inputshape2=[1,3,8,32]).
DYNAMIC = {"dynamic_axes": {"in0": {2: "h", 3: "w"}}}


class ExpandAs(nn.Module):
    """A conv, then a (1, 8, 1, 1) learned bias or a pooled feature spread over its output with expand_as."""

    def __init__(self, op="add"):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, 1, 1)
        self.bias = nn.Parameter(torch.randn(1, 8, 1, 1))
        self.op = op

    def forward(self, x):
        y, op = self.conv(x), self.op
        if op == "add":
            return y + self.bias.expand_as(y)
        if op == "broadcast":  # the workaround: the add broadcasts by itself
            return y + self.bias
        if op == "mul":
            return y * self.bias.expand_as(y)
        if op == "cat":  # global context concatenated to the local features
            return torch.cat([y, y.mean((2, 3), keepdim=True).expand_as(y)], 1)
        if op == "pooled":  # SE-like: a pooled feature spread back, then a product
            return y * torch.sigmoid(y.mean((2, 3), keepdim=True)).expand_as(y)
        if op == "tokens":  # a (1, 1, C) position embedding spread over the tokens
            t = y.flatten(2).transpose(1, 2)
            return t + self.bias.view(1, 1, 8).expand_as(t)
        if op == "relu":
            return torch.relu(self.bias.expand_as(y)) - y
        raise ValueError(op)


def cases():
    x = randn(1, 3, 8, 16)
    yield Case("add-expand-as", seeded(ExpandAs), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC, ways=["opset11", "opset17", "opset18", "opset13-onnxsim"])
    yield Case("add-broadcast", seeded(ExpandAs, "broadcast"), (x,), opset=13, dynamo=False, export_kwargs=DYNAMIC,
               rewrites="add-expand-as")


def variants():
    x = randn(1, 3, 8, 16, seed=2)
    yield Case("mul-expand-as", seeded(ExpandAs, "mul", seed=2), (x,), opset=13, dynamo=False, export_kwargs=DYNAMIC)
    yield Case("cat-expand-as", seeded(ExpandAs, "cat", seed=2), (x,), opset=13, dynamo=False, export_kwargs=DYNAMIC)
    yield Case("pooled-expand-as", seeded(ExpandAs, "pooled", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
    yield Case("tokens-expand-as", seeded(ExpandAs, "tokens", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
    yield Case("relu-expand-as", seeded(ExpandAs, "relu", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
