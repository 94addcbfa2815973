"""known-bug: Tencent/ncnn#4994 -- onnx2ncnn does not read ONNX external data. torch 2.13's default exporter
(dynamo=True) stores every initializer larger than 256 bytes in `<model>.onnx.data`; onnx2ncnn sees those
tensors as empty and writes layers without their weights."""

import torch
from torch import nn

from kb.blocks import seeded
from kb.export import Case


class ConvBlock(nn.Module):
    """conv 3x3 (4 -> 16: a 2.3 KB weight, stored externally), ReLU, conv 1x1 back to 4 channels."""

    def __init__(self, c_in=4, c=16):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c, 3, padding=1)
        self.conv2 = nn.Conv2d(c, 4, 1)

    def forward(self, x):
        return self.conv2(torch.relu(self.conv1(x)))


class ResBlock(nn.Module):
    """ResNet's basic block: conv-BN-ReLU-conv-BN, residual add, ReLU."""

    def __init__(self, c=8):
        super().__init__()
        self.stem = nn.Conv2d(4, c, 1)
        self.c1, self.b1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        x = self.stem(x)
        y = self.b2(self.c2(torch.relu(self.b1(self.c1(x)))))
        return torch.relu(x + y)


class Depthwise(nn.Module):
    """A MobileNet pair: 1x1 expand to 32 channels, 3x3 depthwise (32 x 9 floats), 1x1 project."""

    def __init__(self):
        super().__init__()
        self.expand = nn.Conv2d(4, 32, 1)
        self.dw = nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.project = nn.Conv2d(32, 4, 1)

    def forward(self, x):
        return self.project(torch.relu(self.dw(torch.relu(self.expand(x)))))


class MLP(nn.Module):
    """Two Linear layers on a (batch, features) vector (a 16 x 32 weight)."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x.flatten(1)[:, :16])))


def x_in():
    torch.manual_seed(1)
    return torch.randn(1, 4, 6, 6)


IO = dict(input_names=["in0"], output_names=["out0"])
INLINE = {"external_data": False}


def cases():
    block = seeded(ConvBlock)
    x = x_in()
    # torch.onnx.export(..., dynamo=True) with its defaults: conv1's weight goes to ext-block.onnx.data.
    yield Case("ext-block", block, (x,), opset=18, dynamo=True, **IO)
    # Workarounds, same module and input: export inline, or let onnx-simplifier load and re-save the model.
    yield Case("ext-block-inline", block, (x,), opset=18, dynamo=True, export_kwargs=INLINE, trigger=False,
               rewrites="ext-block", **IO)
    yield Case("ext-block-onnxsim", block, (x,), opset=18, dynamo=True, simplify=True, trigger=False,
               rewrites="ext-block", **IO)


def variants():
    x = x_in()
    yield Case("dynamo-default", seeded(ConvBlock), (x,), opset=18, dynamo=True, **IO)
    yield Case("dynamo-external-true", seeded(ConvBlock), (x,), opset=18, dynamo=True,
               export_kwargs={"external_data": True}, **IO)
    yield Case("dynamo-opset20", seeded(ConvBlock), (x,), opset=20, dynamo=True, **IO)
    yield Case("resnet-basic-block", seeded(ResBlock).eval(), (x,), opset=18, dynamo=True, **IO)
    yield Case("mobilenet-depthwise", seeded(Depthwise), (x,), opset=18, dynamo=True, **IO)
    yield Case("mlp", seeded(MLP), (x,), opset=18, dynamo=True, **IO)
    # Near misses: every weight 256 bytes or less (conv1 4 -> 1: 144 bytes, stays inline); inline export; the TorchScript exporter;
    # onnx-simplifier (which re-saves the model inline).
    yield Case("small-weights-near-miss", seeded(ConvBlock, 4, 1), (x,), opset=18, dynamo=True, **IO)
    yield Case("inline-near-miss", seeded(ConvBlock), (x,), opset=18, dynamo=True, export_kwargs=INLINE, **IO)
    yield Case("torchscript-near-miss", seeded(ConvBlock), (x,), opset=18, dynamo=False, **IO)
    yield Case("onnxsim-near-miss", seeded(ConvBlock), (x,), opset=18, dynamo=True, simplify=True, **IO)
