"""KB114: a feature map (C, H, W) and its own mean over every non-batch axis, kept as (1, 1, 1), in one
Sub / Div / Add / Mul. onnx2ncnn writes the ReduceMean as a Reduction that keeps its dims, so ncnn's BinaryOp
gets a 3-D blob of one value; ncnn 1.0.20221128 has no broadcast rule for that pair."""

import torch
from torch import nn

from kb.blocks import ConvThen, Fn, randn, seeded
from kb.export import Case

IO = dict(input_names=["in0"], output_names=["out0"])
ALL = [1, 2, 3]  # every axis but the batch of a (N, C, H, W) tensor


def mean_all(y, keepdim=True):
    return y.mean(dim=ALL, keepdim=keepdim)


# What follows the conv, each a function of its (1, 8, 12, 10) output y.
def sub_mean(y):
    return y - mean_all(y)  # Tencent/ncnn#3432


def div_mean(y):
    return y / mean_all(y.abs())  # Tencent/ncnn#3516: a map divided by a (1, 1, 1) blob


def add_mean(y):
    return y + mean_all(y)


def mul_mean(y):
    return y * mean_all(y)


def mean_sub(y):
    return mean_all(y) - y  # the (1, 1, 1) operand first


def mean_div(y):
    return mean_all(y) / (y.abs() + 1)


def normalize_all(y):
    """(y - mean) / sqrt(var + eps) over C, H, W: GroupNorm(1) written out, as style and image models do."""
    c = y - mean_all(y)
    return c / torch.sqrt(mean_all(c * c) + 1e-5)


def sub_channel_mean(y):
    return y - y.mean(dim=[2, 3], keepdim=True)  # a (C, 1, 1) operand: per channel


def sub_pixel_mean(y):
    return y - y.mean(dim=1, keepdim=True)  # a (1, H, W) operand


def sub_const(y):
    return y - torch.full((1, 1, 1, 1), 0.75)  # a (1, 1, 1, 1) constant instead of a computed mean


def div_const(y):
    return y / torch.full((1, 1, 1, 1), 0.75)


def const_sub(y):
    return torch.full((1, 1, 1, 1), 0.75) - y


# Workaround: drop keepdim, so the mean is a 1-element (1,) tensor; torch broadcasts it the same way.
def sub_mean_flat(y):
    return y - mean_all(y, keepdim=False)


def div_mean_flat(y):
    return y / mean_all(y.abs(), keepdim=False)


def conv_then(fn, seed=0, channels=8):
    return seeded(lambda: ConvThen(nn.Conv2d(3, channels, 3, padding=1), Fn(fn)), seed=seed)


def sub_mean_1d(y):
    return y - y.mean(dim=[1, 2], keepdim=True)  # (N, C, L): a (1, 1) operand, a 2-D ncnn blob


def cases():
    x = randn(1, 3, 12, 10)
    yield Case("sub-mean", conv_then(sub_mean), (x,), opset=13, dynamo=False, **IO)
    yield Case("div-mean", conv_then(div_mean), (x,), opset=13, dynamo=False, **IO)
    yield Case("sub-mean-flat", conv_then(sub_mean_flat), (x,), opset=13, dynamo=False, trigger=False,
               rewrites="sub-mean", **IO)
    yield Case("div-mean-flat", conv_then(div_mean_flat), (x,), opset=13, dynamo=False, trigger=False,
               rewrites="div-mean", **IO)
    yield Case("sub-channel-mean", conv_then(sub_channel_mean), (x,), opset=13, dynamo=False, trigger=False, **IO)


def variants():
    x = randn(1, 3, 12, 10, seed=2)
    yield Case("add-mean", conv_then(add_mean, 3), (x,), opset=13, dynamo=False, **IO)
    yield Case("mul-mean", conv_then(mul_mean, 3), (x,), opset=13, dynamo=False, **IO)
    yield Case("mean-sub", conv_then(mean_sub, 3), (x,), opset=13, dynamo=False, **IO)
    yield Case("mean-div", conv_then(mean_div, 3), (x,), opset=13, dynamo=False, **IO)
    yield Case("normalize-all", conv_then(normalize_all, 3), (x,), opset=13, dynamo=False, **IO)
    yield Case("sub-mean-onnxsim", conv_then(sub_mean, 3), (x,), opset=13, dynamo=False, simplify=True, **IO)
    # 32 channels, as in the threads (more than one packed channel of 8): another branch of the old BinaryOp.
    yield Case("sub-mean-32-channels", conv_then(sub_mean, 3, channels=32), (x,), opset=13, dynamo=False, **IO)
    yield Case("sub-mean-opset11", conv_then(sub_mean, 3), (x,), opset=11, dynamo=False, **IO)
    yield Case("sub-mean-opset17", conv_then(sub_mean, 3), (x,), opset=17, dynamo=False, **IO)
    yield Case("sub-mean-1d", seeded(lambda: ConvThen(nn.Conv1d(3, 8, 3, padding=1), Fn(sub_mean_1d)), seed=3),
               (randn(1, 3, 20, seed=2),), opset=13, dynamo=False, **IO)
    # A (1, 1, 1, 1) constant instead of the mean: onnx2ncnn writes it as a MemoryData of the same 3-D shape.
    yield Case("sub-const", conv_then(sub_const, 3), (x,), opset=13, dynamo=False, **IO)
    yield Case("div-const", conv_then(div_const, 3), (x,), opset=13, dynamo=False, **IO)
    yield Case("const-sub", conv_then(const_sub, 3), (x,), opset=13, dynamo=False, **IO)
    # Near misses: a per-channel or a per-pixel mean, a 1-element mean (no keepdim).
    yield Case("sub-channel-mean-near-miss", conv_then(sub_channel_mean, 3), (x,), opset=13, dynamo=False, **IO)
    yield Case("sub-pixel-mean-near-miss", conv_then(sub_pixel_mean, 3), (x,), opset=13, dynamo=False, **IO)
    yield Case("sub-mean-flat-near-miss", conv_then(sub_mean_flat, 3), (x,), opset=13, dynamo=False, **IO)
