"""KB174: a broadcasting Tensor.expand_as (a pooled (1, C, 1, 1) feature spread over the map), traced and converted by
pnnx: pnnx has no ncnn rule for it and writes it through as Tensor.expand_as, so ncnn stops at "layer
Tensor.expand_as not exists or registered" (every release measured). Tensor.expand with explicit sizes, and the ONNX
Expand either way, end the same way as Tensor.expand on the releases before 20251112 (pnnx/pnnx#228)."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class Spread(nn.Module):
    """A conv, its global mean (1, 4, 1, 1), spread back over the (1, 4, H, W) map the ways models write it."""

    def __init__(self, op, c=4):
        super().__init__()
        self.op = op
        self.conv = nn.Conv2d(3, c, 1)

    def forward(self, x):
        op = self.op
        y = self.conv(x)
        p = y.mean((2, 3), keepdim=True)
        if op == "cat-expand-as":  # global context concatenated to the local features
            return torch.cat([y, p.expand_as(y)], 1)
        if op == "cat-repeat":  # the workaround: the same copies made by Tensor.repeat
            return torch.cat([y, p.repeat(1, 1, y.shape[2], y.shape[3])], 1)
        if op == "cat-expand":  # Tensor.expand with the sizes written out
            return torch.cat([y, p.expand(-1, -1, y.shape[2], y.shape[3])], 1)
        if op == "cat-expand-size":  # Tensor.expand to another tensor's size()
            return torch.cat([y, p.expand(y.size())], 1)
        if op == "relu-expand-as":  # an activation after the expand
            return torch.relu(p.expand_as(y))
        if op == "scaled-expand-as":  # a scalar op after the expand
            return p.expand_as(y) * 1.5
        if op == "width-expand-as":  # spread along one axis only
            q = y.mean(3, keepdim=True)
            return torch.cat([y, q.expand_as(y)], 1)
        if op == "tokens-expand-as":  # a (1, 1, C) token spread over the sequence, then concatenated
            t = y.flatten(2).transpose(1, 2)
            return torch.cat([t, t.mean(1, keepdim=True).expand_as(t)], 2)
        if op == "se-expand-as":  # near miss: SE-style gating, the expand feeding a product with the full map
            return y * p.expand_as(y)
        raise ValueError(op)


def cases():
    x = randn(1, 3, 4, 4)
    yield Case("cat-expand-as", seeded(Spread, "cat-expand-as"), (x,), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    # The workaround: the same weights and input, Tensor.repeat instead of expand_as (the same values).
    yield Case("cat-repeat", seeded(Spread, "cat-repeat"), (x,), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True, trigger=False, rewrites="cat-expand-as")


def variants():
    ts = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("relu-expand-as", seeded(Spread, "relu-expand-as"), (randn(1, 3, 4, 4, seed=2),), **ts)
    yield Case("scaled-expand-as", seeded(Spread, "scaled-expand-as"), (randn(1, 3, 4, 4, seed=3),), **ts)
    yield Case("width-expand-as", seeded(Spread, "width-expand-as"), (randn(1, 3, 4, 6, seed=4),), **ts)
    yield Case("tokens-expand-as", seeded(Spread, "tokens-expand-as"), (randn(1, 3, 4, 4, seed=5),), **ts)
    yield Case("wide-expand-as", seeded(Spread, "cat-expand-as", 16), (randn(1, 3, 8, 8, seed=6),), **ts)
    yield Case("cat-expand", seeded(Spread, "cat-expand"), (randn(1, 3, 4, 4, seed=7),), **ts)
    yield Case("cat-expand-size", seeded(Spread, "cat-expand-size"), (randn(1, 3, 4, 4, seed=8),), **ts)
    yield Case("se-expand-as", seeded(Spread, "se-expand-as"), (randn(1, 3, 4, 4, seed=9),), **ts)  # near miss
    # from the ONNX export: torch writes Tensor.expand with sizes as Expand of a computed constant shape
    yield Case("cat-expand-onnx", seeded(Spread, "cat-expand"), (randn(1, 3, 4, 4, seed=10),), ["in0"], ["out0"],
               opset=17, dynamo=False)
