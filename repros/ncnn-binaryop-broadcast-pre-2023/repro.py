"""KB198: broadcasts the pre-2023 ncnn BinaryOp had no branch for. Tencent/ncnn#4803: a 4-D blob times a
constant with 1 on its depth axis; #4752: an ExpandDims'd [17, 1, 128] times [1, 2, 128] (both operands
broadcast); #3297: [1, 2, 1] plus [2, 2, 2]. ncnn 1.0.20221128 to 1.0.20230517 return A's shape or values
computed from the wrong memory; the rewritten BinaryOp of 1.0.20230816 broadcasts them as numpy does."""

import torch
from torch import nn

from kb.blocks import Fc, randn, seeded
from kb.export import Case


class ConvMul(nn.Module):
    """Tencent/ncnn#4803: a (1, 2, 3, 5, 4) map (a Conv3d output: ncnn's 4-D blob c=2, d=3, h=5, w=4) times a
    learned constant of shape `shape`; full=True stores the same constant expanded to the map's shape."""

    def __init__(self, shape=(1, 2, 1, 5, 4), full=False, mean=(), conv=True):
        super().__init__()
        self.conv = nn.Conv3d(2, 2, 1) if conv else nn.Identity()  # onnx2ncnn converts no Conv3d
        k = torch.randn(*shape)
        self.k = nn.Parameter(k.expand(1, 2, 3, 5, 4).contiguous() if full else k)
        self.mean = mean

    def forward(self, x):
        y = self.conv(x)
        return y * (y.mean(dim=self.mean, keepdim=True) if self.mean else self.k)


class ExpandMul(nn.Module):
    """Tencent/ncnn#4752: base (1, 17, 128).unsqueeze(2) times (1, 1, 2, 128): [17, 1, 128] x [1, 2, 128] to ncnn.
    cat=True repeats the unsqueezed axis with torch.cat first, so only the second operand is broadcast."""

    def __init__(self, op="mul", cat=False):
        super().__init__()
        self.op, self.cat = op, cat

    def forward(self, a, b):
        a = a.unsqueeze(2)
        if self.cat:
            a = torch.cat([a, a], dim=2)
        return a * b if self.op == "mul" else a + b


class Add(nn.Module):
    """Tencent/ncnn#3297: (1, 1, 2, 1) + (1, 2, 2, 2), [1, 2, 1] + [2, 2, 2] to ncnn. op picks the arithmetic,
    swap puts the larger operand first, cat repeats the small one to the full shape with torch.cat first."""

    def __init__(self, op="add", swap=False, cat=False):
        super().__init__()
        self.op, self.swap, self.cat = op, swap, cat

    def forward(self, a, b):
        if self.cat:
            a = torch.cat([a, a], dim=1)
            a = torch.cat([a, a], dim=3)
        if self.swap:
            a, b = b, a
        if self.op == "add":
            return a + b
        if self.op == "sub":
            return a - b
        return a * b


class ConvAdd(nn.Module):
    """Control: a Conv2d map (ncnn's 3-D blob) plus a per-channel constant (3, 1, 1)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        self.k = nn.Parameter(torch.randn(3, 1, 1))

    def forward(self, x):
        return self.conv(x) + self.k


def map5():
    return randn(1, 2, 3, 5, 4)


def two(shape_a, shape_b):
    return randn(*shape_a, seed=1), randn(*shape_b, seed=2)


IO1 = dict(input_names=["in0"], output_names=["out0"])
IO2 = dict(input_names=["in0", "in1"], output_names=["out0"])


def cases():
    yield Case("mul-middle-axis", seeded(ConvMul), (map5(),), opset=13, dynamo=False, **IO1)
    yield Case("expand-mul", ExpandMul(), two((1, 17, 128), (1, 1, 2, 128)), opset=13, dynamo=False, **IO2)
    yield Case("add-1x2x1-2x2x2", Add(), two((1, 1, 2, 1), (1, 2, 2, 2)), opset=13, dynamo=False, **IO2)
    # Control: a conv map plus a per-channel constant, (C, H, W) with (C, 1, 1): a broadcast every release has a
    # branch for.
    yield Case("conv-plus-c11", seeded(ConvAdd), (randn(1, 3, 5, 4),), opset=13, dynamo=False, trigger=False, **IO1)
    # Workaround: the broadcast done in the model (a full-size constant, torch.cat along the unit axis).
    yield Case("mul-middle-axis-full", seeded(ConvMul, full=True), (map5(),), opset=13, dynamo=False,
               trigger=False, rewrites="mul-middle-axis", **IO1)
    yield Case("expand-cat-mul", ExpandMul(cat=True), two((1, 17, 128), (1, 1, 2, 128)), opset=13, dynamo=False,
               trigger=False, rewrites="expand-mul", **IO2)
    yield Case("add-cat-2x2x2", Add(cat=True), two((1, 1, 2, 1), (1, 2, 2, 2)), opset=13, dynamo=False,
               trigger=False, rewrites="add-1x2x1-2x2x2", **IO2)


def variants():
    # Through onnx2ncnn, which converts no Conv3d, writes a 5-D constant wrongly on every release and reads no
    # opset-13 Unsqueeze: the map is the 5-D input itself (ncnn's 4-D blob), the operand its own mean.
    yield Case("mul-depth-mean", seeded(ConvMul, mean=2, conv=False), (map5(),), opset=13, dynamo=False, **IO1)
    yield Case("mul-channel-4d-mean", seeded(ConvMul, mean=[2, 3, 4], conv=False), (map5(),), opset=13,
               dynamo=False, **IO1)
    yield Case("expand-mul-opset11", ExpandMul(), two((1, 17, 128), (1, 1, 2, 128)), opset=11, dynamo=False, **IO2)
    yield Case("expand-add-opset12", ExpandMul(op="add"), two((1, 17, 128), (1, 1, 2, 128)), opset=12,
               dynamo=False, **IO2)
    yield Case("expand-mul-onnxsim", ExpandMul(), two((1, 17, 128), (1, 1, 2, 128)), opset=11, dynamo=False,
               simplify=True, **IO2)
    yield Case("sub-1x2x1-2x2x2", Add(op="sub"), two((1, 1, 2, 1), (1, 2, 2, 2)), opset=13, dynamo=False, **IO2)
    yield Case("mul-2x2x2-1x2x1", Add(op="mul", swap=True), two((1, 1, 2, 1), (1, 2, 2, 2)), opset=13, dynamo=False,
               **IO2)
    yield Case("add-1x2x1-2x2x2-onnxsim", Add(), two((1, 1, 2, 1), (1, 2, 2, 2)), opset=13, dynamo=False,
               simplify=True, **IO2)
    # nn.Linear on (1, 16, 32) tokens (SwinIR's Mlp fc1): MatMul then Add(bias, y), which onnx2ncnn writes as an
    # InnerProduct and a BinaryOp of the 1-D bias (64) first against the 2-D blob (16 x 64).
    yield Case("linear-tokens-bias", seeded(Fc, 32, 64), (randn(1, 16, 32),), opset=13, dynamo=False, **IO1)
    # Near misses: equal shapes, or one operand broadcast in a way the old BinaryOp has a branch for.
    yield Case("expand-cat-mul-near-miss", ExpandMul(cat=True), two((1, 17, 128), (1, 1, 2, 128)), opset=11,
               dynamo=False, **IO2)
    yield Case("add-c11-near-miss", Add(), two((1, 3, 5, 4), (1, 3, 1, 1)), opset=13, dynamo=False, **IO2)
    yield Case("conv-plus-c11-near-miss", seeded(ConvAdd), (randn(1, 3, 5, 4),), opset=13, dynamo=False, **IO1)
