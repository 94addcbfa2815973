"""KB012: torch.isnan (ONNX IsNaN) in MNN, and the rewrites people try instead."""

import torch
from torch import nn

from kb.blocks import Fn
from kb.export import Case

BIG = 3.0e38


def with_nans(shape=(1, 4, 8, 8)):
    torch.manual_seed(0)
    x = torch.randn(*shape)
    x.view(-1)[::7] = float("nan")
    return x


def zero_nans(x):
    return torch.where(torch.isnan(x), torch.zeros_like(x), x)


def ne_self(x):
    """The usual rewrite: NaN is the only value not equal to itself."""
    return torch.where(x != x, torch.zeros_like(x), x)


def abs_le_big(x):
    """Candidate: |x| <= BIG is false only for NaN."""
    return torch.where(torch.abs(x) <= BIG, x, torch.zeros_like(x))


def eq_self(x):
    return torch.where(x == x, x, torch.zeros_like(x))


def strict_compare(x):
    """The workaround: x < inf or x > -inf holds for every value but NaN, and MNN's Less/Greater get NaN right."""
    inf = torch.full_like(x, float("inf"))
    return torch.where((x < inf) | (x > -inf), x, torch.zeros_like(x))


class ConvNaN(nn.Module):
    """A NaN guard inside a model: conv, then zero out NaNs, then relu."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        return torch.relu(zero_nans(self.conv(x)))


class Guard(nn.Module):
    """A NaN guard on values that hold NaN where the model made them (x plus a constant with NaN holes,
    every 7th element), as NaNs usually arise inside a model. The input itself holds no NaN: a rewrite
    must be fed the original's inputs, and kb compares those with NaN != NaN."""

    def __init__(self, fn, shape=(1, 4, 8, 8)):
        super().__init__()
        self.fn = fn
        holes = torch.zeros(shape)
        holes.view(-1)[::7] = float("nan")
        self.register_buffer("holes", holes)

    def forward(self, x):
        return self.fn(x + self.holes)


def cases():
    x = with_nans()
    # NaN and +inf: the workaround must zero the NaNs and keep the infs, as torch.isnan does.
    finite_inf = torch.nan_to_num(x, nan=0.5).index_fill_(3, torch.tensor([1]), float("inf"))
    yield Case("isnan-where", Guard(zero_nans), (finite_inf,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("ne-self", Fn(ne_self), (x,), ["x"], ["y"], opset=17, dynamo=False, trigger=False)
    yield Case("abs-le-big", Fn(abs_le_big), (x,), ["x"], ["y"], opset=17, dynamo=False, trigger=False)
    yield Case("eq-self", Fn(eq_self), (x,), ["x"], ["y"], opset=17, dynamo=False, trigger=False)
    yield Case("strict-compare", Guard(strict_compare), (finite_inf,), ["x"], ["y"], opset=17, dynamo=False,
               trigger=False, rewrites="isnan-where")


def variants():
    x = with_nans()
    yield Case("isnan-opset13", Fn(zero_nans), (x,), ["x"], ["y"], opset=13, dynamo=False)
    yield Case("isnan-dynamo", Fn(zero_nans), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("isnan-onnxsim", Fn(zero_nans), (x,), ["x"], ["y"], opset=17, dynamo=False, simplify=True)
    yield Case("isnan-mask-output", Fn(lambda t: torch.isnan(t).float()), (x,), ["x"], ["y"], opset=17,
               dynamo=False)
    yield Case("nan-to-num", Fn(lambda t: torch.nan_to_num(t, nan=0.0)), (x,), ["x"], ["y"], opset=17,
               dynamo=False)
    yield Case("masked-fill", Fn(lambda t: t.masked_fill(torch.isnan(t), -1.0)), (x,), ["x"], ["y"], opset=17,
               dynamo=False)
    yield Case("conv-isnan-relu", ConvNaN(), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("isnan-count", Fn(lambda t: torch.isnan(t).float().sum(dim=(2, 3))), (x,), ["x"], ["y"], opset=17,
               dynamo=False)
    # near misses: no IsNaN node
    yield Case("ne-self-near-miss", Fn(ne_self), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("isinf-near-miss", Fn(lambda t: torch.where(torch.isinf(t), torch.zeros_like(t), t)),
               (x.nan_to_num(0.0),), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("isfinite", Fn(lambda t: torch.where(torch.isfinite(t), t, torch.zeros_like(t))),
               (x,), ["x"], ["y"], opset=17, dynamo=False)
