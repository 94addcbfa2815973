"""KB226: a LayerNorm over more than the last axis, through pnnx's TorchScript path, then ncnn. pnnx writes ncnn's
LayerNorm with 0=affine_size, the product of normalized_shape, and nothing else; ncnn's LayerNorm normalizes each
row (the last axis) of a 1-D or 2-D blob, and of a 3-D blob either each row (affine_size == w) or each channel's
h*w plane. A normalization over the last two axes of a (1, T, C) tensor (a 2-D blob once the batch is dropped) or
over (C, H, W) of a (1, C, H, W) one is computed over other elements than torch's, without a word."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import like, randn, seeded
from kb.export import Case


class Norm(nn.Module):
    """An nn.LayerNorm over `shape`, its affine weight and bias non-trivial, optionally after a Linear or a Conv2d."""

    def __init__(self, shape, before=None, affine=True):
        super().__init__()
        self.before = before
        self.ln = nn.LayerNorm(shape, elementwise_affine=affine)
        if affine:
            self.ln.weight.data.uniform_(0.5, 1.5)
            self.ln.bias.data.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.ln(self.before(x) if self.before is not None else x)


class Flat(nn.Module):
    """The workaround: the normalized axes flattened into one last axis, a LayerNorm over it with the weight and
    bias flattened the same way, and the original shape restored."""

    def __init__(self, shape):
        super().__init__()
        self.shape = tuple(shape)
        self.ln = nn.LayerNorm(shape)

    def forward(self, x):
        lead = x.shape[: x.dim() - len(self.shape)]
        y = F.layer_norm(x.flatten(x.dim() - len(self.shape)), (self.ln.weight.numel(),), self.ln.weight.flatten(),
                         self.ln.bias.flatten(), self.ln.eps)
        return y.reshape(*lead, *self.shape)


class Functional(nn.Module):
    """F.layer_norm with constant weight and bias (or none), as torch's own op samples call it."""

    def __init__(self, shape, affine=True):
        super().__init__()
        self.shape = tuple(shape)
        self.w = torch.rand(shape) + 0.5 if affine else None
        self.b = torch.rand(shape) - 0.5 if affine else None

    def forward(self, x):
        return F.layer_norm(x, self.shape, self.w, self.b, 1e-5)


def cases():
    io = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)
    tc, chw = randn(1, 10, 16), randn(1, 4, 5, 6)
    ln_tc = seeded(Norm, (10, 16))
    yield Case("ln-tc", ln_tc, (tc,), **io)
    ln_chw = seeded(Norm, (4, 5, 6))
    yield Case("ln-chw", ln_chw, (chw,), **io)
    # control: the usual transformer LayerNorm, over the last axis only
    yield Case("ln-last", seeded(Norm, 16), (tc,), trigger=False, **io)
    # the workaround: the same weights, the normalized axes flattened into one last axis, then reshaped back
    yield Case("ln-tc-flat", like(ln_tc, Flat, (10, 16)), (tc,), trigger=False, rewrites="ln-tc", **io)
    yield Case("ln-chw-flat", like(ln_chw, Flat, (4, 5, 6)), (chw,), trigger=False, rewrites="ln-chw", **io)


def variants():
    io = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)
    x23, tc, chw = randn(1, 2, 3, seed=2), randn(1, 10, 16, seed=3), randn(1, 4, 5, 6, seed=4)
    yield Case("functional-2x3", seeded(Functional, (2, 3)), (x23,), **io)
    yield Case("functional-2x3-no-affine", seeded(Functional, (2, 3), False), (x23,), **io)
    yield Case("functional-1x2x3", seeded(Functional, (1, 2, 3)), (x23,), **io)
    yield Case("module-tc-no-affine", seeded(Norm, (10, 16), None, False), (tc,), **io)
    yield Case("linear-then-ln-tc", seeded(lambda: Norm((10, 16), nn.Linear(16, 16))), (tc,), **io)
    yield Case("conv-then-ln-chw", seeded(lambda: Norm((4, 5, 6), nn.Conv2d(4, 4, 3, padding=1))), (chw,), **io)
    yield Case("functional-chw", seeded(Functional, (4, 5, 6)), (chw,), **io)
    yield Case("conv-then-ln-hw", seeded(lambda: Norm((5, 6), nn.Conv2d(4, 4, 3, padding=1))), (chw,), **io)
    # near misses: the last axis only, and the last two axes of a 4-D input (one h*w plane per channel in ncnn)
    yield Case("ln-hw-4d-near-miss", seeded(Norm, (5, 6)), (chw,), **io)
    yield Case("ln-last-4d-near-miss", seeded(Norm, 6), (chw,), **io)
    yield Case("linear-then-ln-last-near-miss", seeded(lambda: Norm(16, nn.Linear(16, 16))), (tc,), **io)
