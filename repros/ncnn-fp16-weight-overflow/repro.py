"""KB056: a weight past fp16's largest value (65504) becomes inf in pnnx's fp16 .bin, and is clamped by ncnn's
x86 InnerProduct when it keeps its weights in fp16 (use_fp16_storage, on by default)."""

import torch
from torch import nn

from kb.export import Case

BIG = 1e5  # past 65504, the largest finite fp16 value
SCALE = 4.0  # the rescale workaround: BIG / 4 = 25000 fits in fp16
ONE_FILE = {"external_data": False}


def linear(big=BIG, bias=None):
    """nn.Linear(16, 16) with one weight set to `big` (a trained layer with one outlier weight)."""
    torch.manual_seed(0)
    m = nn.Linear(16, 16)
    with torch.no_grad():
        if big is not None:
            m.weight[3, 5] = big
        if bias is not None:
            m.bias[3] = bias
    return m


class Rescaled(nn.Module):
    """The same function as `linear()`: weight and bias divided by SCALE (a power of two: exact), output
    multiplied back, so every stored weight fits in fp16."""

    def __init__(self, m):
        super().__init__()
        self.fc = nn.Linear(m.in_features, m.out_features)
        with torch.no_grad():
            self.fc.weight.copy_(m.weight / SCALE)
            self.fc.bias.copy_(m.bias / SCALE)

    def forward(self, x):
        return self.fc(x) * SCALE


class MatMulConst(nn.Module):
    """x @ W with W a parameter: ONNX MatMul with a constant second input."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.w = nn.Parameter(torch.randn(16, 16) * 0.25)
        with torch.no_grad():
            self.w[5, 3] = BIG

    def forward(self, x):
        return x @ self.w


def conv():
    torch.manual_seed(0)
    m = nn.Conv2d(4, 8, 3, padding=1)
    with torch.no_grad():
        m.weight[2, 1, 1, 1] = BIG
    return m


def conv_bn(gamma=1e7):
    """Conv2d + BatchNorm2d with one huge gamma: folded into the conv (by the exporter and by pnnx), the
    conv's weights reach about 1.7e6."""
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.BatchNorm2d(8))
    with torch.no_grad():
        m[1].weight[2] = gamma
    return m


def bn_alone():
    """A BatchNorm2d with one gamma of 1e5, after a ReLU: nothing to fold it into (a near miss)."""
    torch.manual_seed(0)
    m = nn.Sequential(nn.ReLU(), nn.BatchNorm2d(8))
    with torch.no_grad():
        m[1].weight[2] = BIG
    return m


def mlp():
    """A transformer MLP block (Linear -> GELU -> Linear) whose second Linear has one weight of 1e5."""
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))
    with torch.no_grad():
        m[2].weight[3, 5] = BIG
    return m


def x16():
    torch.manual_seed(1)
    return (torch.randn(1, 16),)


def image(c=4):
    torch.manual_seed(1)
    return (torch.randn(1, c, 8, 8),)


def cases():
    yield Case("linear-big", linear(), x16(), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    # The rescale workaround: the same weights and the same input, judged against linear-big's torch output.
    yield Case("linear-rescaled", Rescaled(linear()), x16(), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True, trigger=False, rewrites="linear-big")
    # Control: the same Linear, every weight in fp16's range.
    yield Case("linear-in-range", linear(big=None), x16(), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True, trigger=False)


def variants():
    # Names ending in -opset13 / -opset17 / -dynamo / -onnxsim are converted from ONNX, the rest from TorchScript.
    yield Case("linear", linear(), x16(), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("linear-opset13", linear(), x16(), ["in0"], ["out0"], opset=13, dynamo=False)
    yield Case("linear-opset17", linear(), x16(), ["in0"], ["out0"], opset=17, dynamo=False)
    # external_data=False: torch 2.13's dynamo exporter otherwise puts the weights in a .onnx.data file beside
    # the model, which kb's pnnx driver does not copy and kb scan does not read (weights on disk).
    yield Case("linear-dynamo", linear(), x16(), ["in0"], ["out0"], opset=18, dynamo=True, export_kwargs=ONE_FILE)
    yield Case("linear-onnxsim", linear(), x16(), ["in0"], ["out0"], opset=17, dynamo=False, simplify=True)
    yield Case("matmul-const", MatMulConst(), x16(), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("matmul-const-dynamo", MatMulConst(), x16(), ["in0"], ["out0"], opset=18, dynamo=True,
               export_kwargs=ONE_FILE)
    yield Case("mlp-block", mlp(), x16(), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("conv2d", conv(), image(), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("conv-bn-folded", conv_bn().eval(), image(), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    # Near misses: a weight just inside fp16's range (65000 rounds to 64992), a huge bias only, a huge
    # BatchNorm gamma with no conv to fold into, and no large weight at all.
    yield Case("linear-65000", linear(big=65000.0), x16(), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("bias-only", linear(big=None, bias=BIG), x16(), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("batchnorm-alone", bn_alone().eval(), image(8), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("in-range", linear(big=None), x16(), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
