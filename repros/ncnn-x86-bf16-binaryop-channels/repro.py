"""KB205: ncnn 1.0.20231027 to 1.0.20260114, on x86 with use_bf16_storage on, give a BinaryOp of two computed blobs
(a residual add, a gate y * bn(y), an SE block's x * s) of 8 or more channels an output with 2 or 4 times its
channels (16 -> 64): the conversion of the bf16 blobs back to fp32 packing is wrong
(Tencent/ncnn#6523). 1.0.20230816 and earlier, 1.0.20260526 and later, and fp32 (the default) are right."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class Gate(nn.Module):
    """A 1x1 convolution over c channels, then its output times a function of itself: op "bn" (BatchNorm2d with
    running statistics), "relu", "const" (y * 2 + 1, a constant operand: the near miss)."""

    def __init__(self, c=16, op="bn"):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)
        self.bn = nn.BatchNorm2d(c)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2)
        self.op = op

    def forward(self, x):
        y = self.conv(x)
        if self.op == "bn":
            return self.bn(y) * y
        if self.op == "relu":
            return F.relu(y) * y
        return self.bn(y) * 2 + 1


class Residual(nn.Module):
    """A ResNet-style residual: y + conv3x3(y) after a 1x1 convolution."""

    def __init__(self, c=16):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)
        self.body = nn.Conv2d(c, c, 3, 1, 1)

    def forward(self, x):
        y = self.conv(x)
        return y + self.body(y)


class SE(nn.Module):
    """A squeeze-and-excitation block: y * sigmoid(fc(relu(fc(mean(y))))) after a 1x1 convolution."""

    def __init__(self, c=16):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)
        self.fc1, self.fc2 = nn.Conv2d(c, 4, 1), nn.Conv2d(4, c, 1)

    def forward(self, x):
        y = self.conv(x)
        return y * torch.sigmoid(self.fc2(F.relu(self.fc1(F.adaptive_avg_pool2d(y, 1)))))


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    x = randn(1, 16, 7, 9)
    yield Case("bn-gate", seeded(Gate), (x,), opset=13, dynamo=False, torchscript=True, ways=True, **IO)
    yield Case("residual", seeded(Residual), (x,), opset=13, dynamo=False, torchscript=True, **IO)


def variants():
    x = randn(1, 16, 7, 9)
    yield Case("relu-gate", seeded(Gate, op="relu"), (x,), opset=13, dynamo=False, torchscript=True, **IO)
    yield Case("bn-gate-8-channels", seeded(Gate, 8), (randn(1, 8, 7, 9),), opset=13, dynamo=False, torchscript=True,
               **IO)
    yield Case("bn-gate-32-channels", seeded(Gate, 32), (randn(1, 32, 7, 9),), opset=13, dynamo=False,
               torchscript=True, **IO)
    yield Case("se-block", seeded(SE), (x,), opset=13, dynamo=False, torchscript=True, **IO)
    # Near miss: a BinaryOp with a constant operand.
    yield Case("const-operand-near-miss", seeded(Gate, op="const"), (x,), opset=13, dynamo=False, torchscript=True,
               **IO)
