"""KB242: Tencent/ncnn#4299: an exact GELU (nn.GELU, F.gelu, torch.erf) exported to ONNX holds an Erf node;
onnx2ncnn a4d2ea1 writes it as an Erf layer, which ncnn releases before 1.0.20231027 do not have: load_param
prints 'layer Erf not exists or registered' and the program then dies by SIGSEGV. pnnx writes ncnn's GELU layer."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import Fn, randn, seeded
from kb.export import Case

C, HID = 32, 64  # SwinIR's Mlp: token width, hidden width (mlp_ratio 2)


class Mlp(nn.Module):
    """SwinIR's Mlp on (batch, tokens, channels): Linear, activation, Linear."""

    def __init__(self, act=nn.GELU):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(C, HID), act(), nn.Linear(HID, C)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class ConvGelu(nn.Module):
    """A conv body with F.gelu, as in SwinIR's convolutional parts."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.conv, self.approximate = nn.Conv2d(3, 8, 3, padding=1), approximate

    def forward(self, x):
        return F.gelu(self.conv(x), approximate=self.approximate)


def tokens():
    return randn(1, 16, C)


def image():
    return randn(1, 3, 8, 8)


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    yield Case("mlp-gelu", seeded(Mlp), (tokens(),), opset=13, dynamo=False, torchscript=True,
               ways=["opset11", "opset15", "opset17", "opset18"], **IO)
    yield Case("erf", Fn(torch.erf), (image(),), opset=13, dynamo=False, **IO)
    yield Case("conv-gelu", seeded(ConvGelu), (image(),), opset=13, dynamo=False, torchscript=True, **IO)
    # Control: the same conv with ReLU, no Erf.
    yield Case("conv-relu", seeded(lambda: nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())), (image(),),
               opset=13, dynamo=False, trigger=False, **IO)
    # Workaround: dynamo=True at opset 20 writes the GELU as one Gelu node, no Erf.
    yield Case("conv-gelu-dynamo-opset20", seeded(ConvGelu), (image(),), opset=20, dynamo=True, trigger=False,
               rewrites="conv-gelu", export_kwargs={"external_data": False}, **IO)


def variants():
    yield Case("erf-opset11", Fn(torch.erf), (image(),), opset=11, dynamo=False, **IO)
    yield Case("erf-onnxsim", Fn(torch.erf), (image(),), opset=13, dynamo=False, simplify=True, **IO)
    yield Case("conv-gelu-opset11", seeded(ConvGelu), (image(),), opset=11, dynamo=False, **IO)
    yield Case("conv-gelu-opset17", seeded(ConvGelu), (image(),), opset=17, dynamo=False, **IO)
    yield Case("conv-gelu-onnxsim", seeded(ConvGelu), (image(),), opset=13, dynamo=False, simplify=True, **IO)
    # Near misses: no Erf.
    yield Case("mlp-relu-near-miss", seeded(Mlp, nn.ReLU), (tokens(),), opset=13, dynamo=False, **IO)
    yield Case("conv-sigmoid-near-miss", seeded(lambda: nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.Sigmoid())),
               (image(),), opset=13, dynamo=False, **IO)
