"""known-bug: Tencent/ncnn#3924, #4508, #5673 -- ncnn's BinaryOp broadcasts otherwise than numpy and torch:
releases up to 1.0.20230517 add a [2] vector along the wrong axis of a [5, 2] matrix, 1.0.20221128 leaves the
second row of [2, 3] + [1, 3] unchanged, and onnx2ncnn still hands ncnn operands of different ranks, which
ncnn aligns by their outer axes (a [3, 4, 5] map plus a [4, 5] constant)."""

import torch
from torch import nn

from kb.export import Case

C, H, W = 3, 4, 5


class Add(nn.Module):
    def forward(self, a, b):
        return a + b


class ConvConst(nn.Module):
    """A conv, then an elementwise op with a constant of its own shape (a learned bias map, a mask)."""

    def __init__(self, shape, op="add", act=False, values=None):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(C, C, 3, padding=1)
        self.c = nn.Parameter(values.reshape(shape) if values is not None else torch.randn(*shape))
        self.op, self.act = op, act

    def forward(self, x):
        y = self.conv(x)
        if self.act:
            y = torch.relu(y)
        return y + self.c if self.op == "add" else y * self.c


class Tokens(nn.Module):
    """Near miss: a positional embedding [T, C] added to a token tensor [1, T, C] (ViT)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.proj = nn.Conv2d(C, 8, 2, 2)
        self.pos = nn.Parameter(torch.randn(4, 8))

    def forward(self, x):
        return self.proj(x).reshape(1, 8, 4).transpose(1, 2) + self.pos


def hw_map():
    torch.manual_seed(5)
    return torch.randn(H, W)


def cases():
    # Tencent/ncnn#3924: a [5, 2] matrix plus a [2] vector, two inputs, through onnx2ncnn.
    a, b = torch.arange(10.0).reshape(5, 2), torch.tensor([10.0, 20.0])
    yield Case("add-matrix-vector", Add(), (a, b), ["in0", "in1"], ["out0"], opset=13, dynamo=False)
    # Tencent/ncnn#4508: [2, 3] + [1, 3], through pnnx from TorchScript.
    x, y = torch.tensor([[1.0, 2, 3], [4, 5, 6]]), torch.tensor([[10.0, 20, 30]])
    yield Case("add-row", Add(), (x, y), ["in0", "in1"], ["out0"], opset=13, dynamo=False, torchscript=True)
    torch.manual_seed(0)
    x4 = torch.randn(1, C, H, W)
    io = dict(input_names=["in0"], output_names=["out0"], torchscript=True)
    yield Case("conv-plus-hw", ConvConst((H, W), values=hw_map()), (x4,), opset=13, dynamo=False, **io)
    # The workaround: the same constant stored as [1, 1, H, W], so ncnn gets a 3-D blob of its own.
    yield Case("conv-plus-11hw", ConvConst((1, 1, H, W), values=hw_map()), (x4,), opset=13, dynamo=False,
               trigger=False, rewrites="conv-plus-hw", **io)
    # Control: a per-channel constant [C, 1, 1], the broadcast every CNN has.
    yield Case("conv-plus-c11", ConvConst((C, 1, 1)), (x4,), opset=13, dynamo=False, trigger=False, **io)


def variants():
    torch.manual_seed(1)
    x4 = torch.randn(1, C, H, W)
    io = dict(input_names=["in0"], output_names=["out0"])
    yield Case("plus-hw-opset13", ConvConst((H, W)), (x4,), opset=13, dynamo=False, **io)
    yield Case("plus-hw-opset17", ConvConst((H, W)), (x4,), opset=17, dynamo=False, **io)
    yield Case("plus-hw-dynamo", ConvConst((H, W)), (x4,), opset=18, dynamo=True,
               export_kwargs={"external_data": False}, **io)
    yield Case("plus-hw-onnxsim", ConvConst((H, W)), (x4,), opset=13, dynamo=False, simplify=True, **io)
    yield Case("relu-times-hw", ConvConst((H, W), op="mul", act=True), (x4,), opset=13, dynamo=False, **io)
    yield Case("plus-1hw", ConvConst((1, H, W)), (x4,), opset=13, dynamo=False, **io)
    yield Case("plus-h1", ConvConst((H, 1)), (x4,), opset=13, dynamo=False, **io)
    yield Case("plus-c11-near-miss", ConvConst((C, 1, 1)), (x4,), opset=13, dynamo=False, **io)
    yield Case("plus-w-near-miss", ConvConst((W,)), (x4,), opset=13, dynamo=False, **io)
    yield Case("plus-1w-near-miss", ConvConst((1, W)), (x4,), opset=13, dynamo=False, **io)
    yield Case("plus-11hw-near-miss", ConvConst((1, 1, H, W)), (x4,), opset=13, dynamo=False, **io)
    yield Case("plus-c1w-near-miss", ConvConst((C, 1, W)), (x4,), opset=13, dynamo=False, **io)
    yield Case("tokens-near-miss", Tokens(), (torch.randn(1, C, 4, 4),), opset=13, dynamo=False, **io)
