"""KB214: ops pnnx's TorchScript front end leaves unconverted. Traced and converted with pnnx, each op below is written
into the ncnn .param under its pnnx name (torch.narrow, F.softsign, ...) or its aten name with its scalar arguments
as pnnx.Expression layers (aten::movedim, aten::lerp, ...), and ncnn's load_param refuses the first one it meets.
The rewrites into ops pnnx converts are judged in three chains (shape ops, formulas, the batched matmul) against
the same chains of the original ops; a copy of some originals goes through the ONNX export instead."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import Fn, randn
from kb.export import Case

RRELU_SLOPE = (1.0 / 8 + 1.0 / 3) / 2  # F.rrelu in eval mode: leaky_relu with the mean of lower and upper


def softsign(y):
    """x / (1 + |x|) with a reciprocal: written with a division, pnnx fuses it back into F.softsign."""
    return y * torch.reciprocal(1 + y.abs())


def threshold(y, th, value):
    """F.threshold(y, th, value): m is exactly 1 where y > th, 0 elsewhere."""
    m = torch.ceil(torch.clamp(y - th, 0, 1))
    return value + m * (y - value)


class ShapeChain(nn.Module):
    """channel_shuffle, tril, narrow, diff, tile and movedim in turn, then + 1 (so no reshape or permute ends the
    graph); rewritten: reshape-transpose-reshape, a constant triangular mask, slicing, a difference of slices,
    repeat and permute."""

    def __init__(self, rewritten=False):
        super().__init__()
        self.rewritten = rewritten
        self.register_buffer("lower", torch.tril(torch.ones(6, 10)))

    def forward(self, x):
        if not self.rewritten:
            y = F.channel_shuffle(x, 2)
            y = torch.tril(y)
            y = torch.narrow(y, 2, 1, 3)
            y = torch.diff(y, dim=-1)
            y = torch.tile(y, (1, 1, 2, 1))
            y = torch.movedim(y, 1, -1)
            return y + 1
        y = x.reshape(1, 2, 4, 60).transpose(1, 2).reshape(1, 8, 6, 10)
        y = y * self.lower
        y = y[:, :, 1:4]
        y = y[..., 1:] - y[..., :-1]
        y = y.repeat(1, 1, 2, 1)
        y = y.permute(0, 2, 3, 1)
        return y + 1


class FormulaChain(nn.Module):
    """softsign, threshold, rrelu, softmin, lerp and addcmul in turn; rewritten as formulas of ops pnnx converts."""

    def __init__(self, rewritten=False):
        super().__init__()
        self.rewritten = rewritten

    def forward(self, x):
        if not self.rewritten:
            y = F.softsign(x)
            y = F.threshold(y, 0.1, -0.5)
            y = F.rrelu(y)
            y = F.softmin(y, dim=1)
            y = torch.lerp(y, x, 0.3)
            return torch.addcmul(y, x, y, value=0.5)
        y = softsign(x)
        y = threshold(y, 0.1, -0.5)
        y = F.leaky_relu(y, RRELU_SLOPE)
        y = F.softmax(y * -1.0, dim=1)  # F.softmax(-y): pnnx fuses neg and softmax back into F.softmin
        y = y + 0.3 * (x - y)
        return y + 0.5 * x * y


class BmmChain(nn.Module):
    """torch.baddbmm then Tensor.unflatten, then + 1; rewritten as beta * input + alpha * bmm, then reshape."""

    def __init__(self, rewritten=False):
        super().__init__()
        self.rewritten = rewritten

    def forward(self, x):
        if not self.rewritten:
            y = torch.baddbmm(x[:, :, :8], x, x.transpose(1, 2), beta=0.5, alpha=2.0)
            return y.unflatten(2, (2, 4)) + 1
        y = 0.5 * x[:, :, :8] + 2.0 * torch.bmm(x, x.transpose(1, 2))
        return y.reshape(1, 8, 2, 4) + 1


TS = dict(input_names=["in0"], output_names=["out0"], torchscript=True)
# torch's ONNX exporter refuses F.threshold with a non-zero threshold, torch.diff and F.channel_shuffle: their ONNX
# files keep the aten op as a custom node (only the traced TorchScript is converted for them).
KEEP = dict(TS, export_kwargs={"operator_export_type": torch.onnx.OperatorExportTypes.ONNX_FALLTHROUGH})


def cases():
    x, s = randn(1, 8, 6, 10), randn(1, 8, 60, seed=2)
    yield Case("unflatten", Fn(lambda x: x.unflatten(2, (6, 10))), (s,), opset=17, dynamo=False, **TS)
    yield Case("narrow", Fn(lambda x: torch.narrow(x, 2, 1, 3)), (x,), opset=17, dynamo=False, **TS)
    yield Case("tile", Fn(lambda x: torch.tile(x, (1, 1, 2, 1))), (x,), opset=17, dynamo=False, **TS)
    yield Case("baddbmm", Fn(lambda x: torch.baddbmm(x[:, :, :8], x, x.transpose(1, 2), beta=0.5, alpha=2.0)), (s,),
               opset=17, dynamo=False, **TS)
    yield Case("softsign", Fn(F.softsign), (x,), opset=17, dynamo=False, **TS)
    yield Case("movedim", Fn(lambda x: torch.movedim(x, 1, -1)), (x,), opset=17, dynamo=False, **TS)
    yield Case("threshold", Fn(lambda x: F.threshold(x, 0.1, 20.0)), (x,), opset=17, dynamo=False, **KEEP)
    yield Case("rrelu", Fn(F.rrelu), (x,), opset=17, dynamo=False, **TS)
    yield Case("softmin", Fn(lambda x: F.softmin(x, dim=1)), (x,), opset=17, dynamo=False, **TS)
    yield Case("lerp", Fn(lambda x: torch.lerp(x, x * 2 + 1, 0.3)), (x,), opset=17, dynamo=False, **TS)
    yield Case("addcmul", Fn(lambda x: torch.addcmul(x, x, x + 1, value=0.5)), (x,), opset=17, dynamo=False, **TS)
    yield Case("diff", Fn(lambda x: torch.diff(x, dim=-1)), (x,), opset=17, dynamo=False, **KEEP)
    yield Case("tril", Fn(torch.tril), (x,), opset=17, dynamo=False, **TS)
    yield Case("channel-shuffle", Fn(lambda x: F.channel_shuffle(x, 2)), (x,), opset=17, dynamo=False, **KEEP)
    # The chains the rewrites are judged against (no check runs them), and the rewrites.
    yield Case("shape-chain", ShapeChain(), (x,), opset=17, dynamo=False, **KEEP)
    yield Case("formula-chain", FormulaChain(), (x,), opset=17, dynamo=False, **KEEP)
    yield Case("bmm-chain", BmmChain(), (s,), opset=17, dynamo=False, **TS)
    yield Case("shape-chain-rewritten", ShapeChain(rewritten=True), (x,), trigger=False, rewrites="shape-chain", opset=17, dynamo=False, **TS)
    yield Case("formula-chain-rewritten", FormulaChain(rewritten=True), (x,), trigger=False, rewrites="formula-chain",
               opset=17, dynamo=False, **TS)
    yield Case("bmm-chain-rewritten", BmmChain(rewritten=True), (s,), trigger=False, rewrites="bmm-chain", opset=17, dynamo=False, **TS)
    # The ONNX route: the same ops, exported (opset 17, dynamo=False) and given to pnnx as .onnx files.
    yield Case("unflatten-via-onnx", Fn(lambda x: x.unflatten(2, (6, 10))), (s,), opset=17, dynamo=False,
               trigger=False, rewrites="unflatten")
    yield Case("narrow-via-onnx", Fn(lambda x: torch.narrow(x, 2, 1, 3)), (x,), opset=17, dynamo=False,
               trigger=False, rewrites="narrow")
    yield Case("baddbmm-via-onnx",
               Fn(lambda x: torch.baddbmm(x[:, :, :8], x, x.transpose(1, 2), beta=0.5, alpha=2.0)), (s,), opset=17,
               dynamo=False, trigger=False, rewrites="baddbmm")
    yield Case("movedim-via-onnx", Fn(lambda x: torch.movedim(x, 1, -1)), (x,), opset=17, dynamo=False,
               trigger=False, rewrites="movedim")
    yield Case("rrelu-via-onnx", Fn(F.rrelu), (x,), opset=17, dynamo=False, trigger=False, rewrites="rrelu")
    yield Case("addcmul-via-onnx", Fn(lambda x: torch.addcmul(x, x, x + 1, value=0.5)), (x,), opset=17, dynamo=False,
               trigger=False, rewrites="addcmul")


def variants():
    x, s = randn(1, 8, 6, 10, seed=3), randn(1, 8, 60, seed=4)
    yield Case("unflatten-module", nn.Unflatten(2, (6, 10)), (s,), opset=17, dynamo=False, **TS)
    yield Case("narrow-method", Fn(lambda x: x.narrow(1, 2, 4)), (x,), opset=17, dynamo=False, **TS)
    yield Case("moveaxis", Fn(lambda x: torch.moveaxis(x, -1, 1)), (x,), opset=17, dynamo=False, **TS)
    yield Case("softsign-module", nn.Softsign(), (x,), opset=17, dynamo=False, **TS)
    yield Case("softsign-written-out", Fn(lambda x: x / (1 + x.abs())), (x,), opset=17, dynamo=False, **TS)
    yield Case("softmin-as-softmax-neg", Fn(lambda x: F.softmax(-x, dim=1)), (x,), opset=17, dynamo=False, **TS)
    yield Case("threshold-module", nn.Threshold(0.0, -1.0), (x,), opset=17, dynamo=False, **KEEP)
    yield Case("triu", Fn(lambda x: torch.triu(x, 1)), (x,), opset=17, dynamo=False, **TS)
    yield Case("channel-shuffle-module", nn.ChannelShuffle(4), (x,), opset=17, dynamo=False, **KEEP)
    # The ONNX route of the ops whose export pnnx does not convert either (opset 17, dynamo=False).
    yield Case("tile-onnx", Fn(lambda x: torch.tile(x, (1, 1, 2, 1))), (x,), opset=17, dynamo=False)
    yield Case("softsign-onnx", Fn(F.softsign), (x,), opset=17, dynamo=False)
    yield Case("softmin-onnx", Fn(lambda x: F.softmin(x, dim=1)), (x,), opset=17, dynamo=False)
    yield Case("lerp-onnx", Fn(lambda x: torch.lerp(x, x * 2 + 1, 0.3)), (x,), opset=17, dynamo=False)
    yield Case("tril-onnx", Fn(torch.tril), (x,), opset=17, dynamo=False)
