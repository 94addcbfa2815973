"""KB039: onnx2ncnn writes ONNX's HardSwish op (opset 14 and later, no attributes) as an ncnn HardSwish with its
own default alpha 0.2 instead of the 1/6 ONNX fixes: nn.Hardswish gives wrong outputs, silently."""

import copy

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case

C, H, W = 8, 6, 10


class ManualHardswish(nn.Module):
    """x * relu6(x + 3) / 6: the same function, exported as Add, Clip, Mul, Div at every opset."""

    def forward(self, x):
        return x * F.relu6(x + 3) / 6


class FunctionalHardswish(nn.Module):
    """F.hardswish, as written inline in many models."""

    def forward(self, x):
        return F.hardswish(x)


class HardSigmoidMul(nn.Module):
    """x * hardsigmoid(x): exported as HardSigmoid(alpha=1/6) then Mul, which onnx2ncnn fuses."""

    def forward(self, x):
        return x * F.hardsigmoid(x)


class Block(nn.Module):
    """MobileNetV3's inverted residual with hardswish: 1x1 expand, act, 3x3 depthwise, act, 1x1 project, residual."""

    def __init__(self, act=None, hidden=16):
        super().__init__()
        self.expand = nn.Conv2d(C, hidden, 1)
        self.dw = nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden)
        self.project = nn.Conv2d(hidden, C, 1)
        self.act = act if act is not None else nn.Hardswish()

    def forward(self, x):
        return x + self.project(self.act(self.dw(self.act(self.expand(x)))))


def block():
    torch.manual_seed(0)
    return Block()


def with_manual_act(b):
    """The same block, same weights, with the activation written out."""
    b = copy.deepcopy(b)
    b.act = ManualHardswish()
    return b


def case(name, module, opset=18, dynamo=False, **kw):
    torch.manual_seed(0)
    x = torch.randn(1, C, H, W) * 3  # spread over hardswish's whole range, -3..3 and beyond
    if dynamo:  # one self-contained .onnx file
        kw.setdefault("export_kwargs", {"external_data": False})
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def cases():
    act = nn.Hardswish()
    yield case("hardswish-dynamo", act, dynamo=True)  # torch 2.13's default export: dynamo, opset 18
    b = block()
    yield case("mbv3-block-dynamo", b, dynamo=True)
    # Workarounds, fed the same input: the same nn.Hardswish exported at opset 13 (HardSigmoid + Mul), and the
    # same block with the activation written as x * relu6(x + 3) / 6 (default dynamo export).
    yield case("hardswish-opset13", act, opset=13, trigger=False, rewrites="hardswish-dynamo")
    yield case("mbv3-block-manual-dynamo", with_manual_act(b), dynamo=True, trigger=False, rewrites="mbv3-block-dynamo")
    # A control on the same path: nn.Hardsigmoid is exported with its alpha=1/6 written out.
    yield case("hardsigmoid-dynamo", nn.Hardsigmoid(), dynamo=True, trigger=False)


def variants():
    yield case("hardswish-opset14", nn.Hardswish(), opset=14)
    yield case("hardswish-opset17", nn.Hardswish(), opset=17)
    yield case("hardswish-opset18", nn.Hardswish())
    yield case("hardswish-opset17-onnxsim", nn.Hardswish(), opset=17, simplify=True)
    yield case("functional-hardswish-dynamo", FunctionalHardswish(), dynamo=True)
    yield case("mbv3-block-opset17", block(), opset=17)
    yield case("mbv3-block-opset18", block())
    # Near misses: no HardSwish op in the ONNX file.
    yield case("hardswish-opset13-near-miss", nn.Hardswish(), opset=13)
    yield case("hardswish-opset13-onnxsim-near-miss", nn.Hardswish(), opset=13, simplify=True)
    yield case("mbv3-block-opset13-near-miss", block(), opset=13)
    yield case("hardsigmoid-mul-near-miss", HardSigmoidMul(), dynamo=True)
    yield case("hardsigmoid-near-miss", nn.Hardsigmoid(), opset=17)
    yield case("manual-hardswish-near-miss", ManualHardswish(), opset=17)
