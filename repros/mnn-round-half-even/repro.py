"""KB013: torch.round (ONNX Round) in MNN, on values that sit exactly halfway between two integers."""

import torch
from torch import nn

from kb.blocks import Fn
from kb.export import Case


def halves():
    """Exact halves (-3.5 ... 3.5, where the two rules disagree) and ordinary values, shape (1, 2, 4, 8)."""
    torch.manual_seed(0)
    ties = torch.arange(-8, 8, dtype=torch.float32) + 0.5  # 16 values: -7.5 ... 7.5
    other = torch.randn(48) * 4
    return torch.cat([ties, other]).reshape(1, 2, 4, 8)


class Round(nn.Module):
    def forward(self, x):
        return torch.round(x)


def round_half_even(x):
    """torch.round without a Round op: floor(x + 0.5), minus one where x was a tie and the result is odd."""
    y = torch.floor(x + 0.5)
    tie = (y - x) == 0.5
    odd = (y - 2 * torch.floor(y * 0.5)) == 1
    return y - (tie & odd).to(x.dtype)


class RoundFloor(nn.Module):
    def forward(self, x):
        return round_half_even(x)


class FakeQuant(nn.Module):
    """What quantization-aware code does: scale, round, clamp, rescale."""

    def __init__(self, scale=0.5, op=torch.round):
        super().__init__()
        self.scale, self.op = scale, op

    def forward(self, x):
        return torch.clamp(self.op(x / self.scale), -128, 127) * self.scale


class ConvRound(nn.Module):
    """A Round deep in a model: conv (weights of 1, so exact halves survive), relu, round."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 1, bias=False)
        with torch.no_grad():
            self.conv.weight.copy_(torch.eye(2).reshape(2, 2, 1, 1))

    def forward(self, x):
        return torch.round(self.conv(x) * 1.0 + 0.0)


def cases():
    x = halves()
    yield Case("round", Round(), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("round-floor", RoundFloor(), (x,), ["x"], ["y"], opset=17, dynamo=False, trigger=False, rewrites="round")


def variants():
    x = halves()
    yield Case("round-opset13", Round(), (x,), ["x"], ["y"], opset=13, dynamo=False)
    yield Case("round-opset18-dynamo", Round(), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("round-onnxsim", Round(), (x,), ["x"], ["y"], opset=17, dynamo=False, simplify=True)
    yield Case("fake-quant", FakeQuant(), (x / 2,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("fake-quant-dynamo", FakeQuant(), (x / 2,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("conv-relu-round", ConvRound(), (x,), ["x"], ["y"], opset=13, dynamo=False)
    yield Case("round-decimals", Fn(lambda t: torch.round(t / 10, decimals=1)), (x,), ["x"], ["y"],
               opset=17, dynamo=False)
    # near misses: no Round op
    yield Case("floor-near-miss", Fn(torch.floor), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("ceil-near-miss", Fn(torch.ceil), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("floor-rewrite-dynamo", RoundFloor(), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("fake-quant-floor-rewrite", FakeQuant(op=round_half_even), (x / 2,), ["x"], ["y"], opset=17,
               dynamo=False)
