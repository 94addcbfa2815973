"""KB209: an integer (int64) constant tensor used in float arithmetic, traced: x * torch.tensor(..., dtype=torch.int64).
pnnx stores the constant as an ncnn MemoryData holding its integer bytes, which ncnn reads as float32: the
constant comes out as about 0. Tencent/ncnn#5015 (x * ones(..., int64) * 2), #5880 (an int64 constant output)."""

import torch
from torch import nn

from kb.blocks import randn
from kb.export import Case


class ConstOp(nn.Module):
    """x (op) a constant of `shape` filled with `values` (repeated), of `dtype`; the constant is a plain attribute,
    as in Tencent/ncnn#5015, so tracing makes it a TorchScript constant."""

    def __init__(self, shape=(1, 3, 8, 8), values=(2,), dtype=torch.int64, op="mul"):
        super().__init__()
        n = 1
        for d in shape:
            n *= d
        vals = torch.tensor(values, dtype=torch.float64).repeat(n // len(values) + 1)[:n]
        self.k = vals.reshape(shape).to(dtype)
        self.op = op

    def forward(self, x):
        if self.op == "mul":
            return torch.mul(x, self.k)
        if self.op == "add":
            return x + self.k
        if self.op == "sub":
            return x - self.k
        return x * self.k.float()


class ConstOutputs(nn.Module):
    """Tencent/ncnn#5880: x + 1, and an int64 constant [2, 1, 3, 4] as a second output."""

    def __init__(self, dtype=torch.int64):
        super().__init__()
        self.dtype = dtype

    def forward(self, x):
        return x + 1, torch.tensor([2, 1, 3, 4], dtype=self.dtype)


def image(shape=(1, 3, 8, 8)):
    return randn(*shape)


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    yield Case("mul-int64", ConstOp(), (image(),), opset=13, dynamo=False, torchscript=True, **IO)
    yield Case("int64-output", ConstOutputs(), (randn(4),), opset=13, dynamo=False, torchscript=True,
               input_names=["in0"], output_names=["out0", "out1"])
    # Workaround: the same constant stored as float32.
    yield Case("mul-float32", ConstOp(dtype=torch.float32), (image(),), opset=13, dynamo=False, torchscript=True,
               trigger=False, rewrites="mul-int64", **IO)
    # Control: a float constant of another value, multiplied the same way.
    yield Case("mul-float32-control", ConstOp(values=(0.5, -1.5), dtype=torch.float32), (image(),), opset=13,
               dynamo=False, torchscript=True, trigger=False, **IO)


def variants():
    yield Case("add-int64", ConstOp(op="add"), (image(),), opset=13, dynamo=False, torchscript=True, **IO)
    yield Case("sub-int64-3d", ConstOp(shape=(3, 8, 8), op="sub"), (image(),), opset=13, dynamo=False,
               torchscript=True, **IO)
    yield Case("mul-int64-row", ConstOp(shape=(4,), values=(2, 1, 3, 4)), (image((1, 3, 8, 4)),), opset=13,
               dynamo=False, torchscript=True, **IO)
    yield Case("mul-int32", ConstOp(dtype=torch.int32), (image(),), opset=13, dynamo=False, torchscript=True, **IO)
    yield Case("int32-output", ConstOutputs(dtype=torch.int32), (randn(4),), opset=13, dynamo=False, torchscript=True,
               input_names=["in0"], output_names=["out0", "out1"])
    # Near miss: the int64 constant cast to float in the model.
    yield Case("mul-int64-cast-near-miss", ConstOp(op="cast"), (image(),), opset=13, dynamo=False, torchscript=True,
               **IO)
