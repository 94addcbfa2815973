"""known-bug: Tencent/ncnn#5025 -- F.pad(x, pad, mode="reflect", value=0) traced to TorchScript is left as an
unconverted F.pad by pnnx, and ncnn cannot load it."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import padding_inputs, seeded
from kb.export import Case

C, L = 8, 30  # channels and length of the 1-D (audio decoder) case


class DecoderPad(nn.Module):
    """The #5025 shape: a 1-D decoder stage, reflect-padded with an explicit value=0 before a Conv1d."""

    def __init__(self, value=0.0):
        super().__init__()
        self.conv = nn.Conv1d(C, C, 7)
        self.value = value

    def forward(self, x):
        if self.value is None:  # the workaround: the same padding without value= (reflect ignores it anyway)
            return self.conv(F.pad(x, (3, 3), mode="reflect"))
        return self.conv(F.pad(x, (3, 3), mode="reflect", value=self.value))


class Pad(nn.Module):
    """One padding op, then a scale (so the output is not the padding's own blob)."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.pad = {"reflect2d": nn.ReflectionPad2d(2)}.get(kind)

    def forward(self, x):
        if self.pad is not None:
            y = self.pad(x)
        elif self.kind == "reflect1d":  # near miss: 3-D reflect, as in #5025 but without value=
            y = F.pad(x, (2, 3), mode="reflect")
        else:
            raise ValueError(self.kind)
        return y * 2


class ResnetBlock(nn.Module):
    """CycleGAN / pix2pix's generator block: ReflectionPad2d, conv, norm, ReLU, ReflectionPad2d, conv, residual."""

    def __init__(self, c=4):
        super().__init__()
        self.body = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(c, c, 3), nn.InstanceNorm2d(c), nn.ReLU(),
                                  nn.ReflectionPad2d(1), nn.Conv2d(c, c, 3), nn.InstanceNorm2d(c))

    def forward(self, x):
        return x + self.body(x)


def cases():
    x1, x2, _ = padding_inputs()  # the family's inputs, as the ledger measured them
    io = dict(input_names=["in0"], output_names=["out0"])
    dec = seeded(DecoderPad)
    # Its ONNX is a plain reflect Pad, which pnnx converts: only the TorchScript path fails (the entry is untriggered).
    yield Case("pad-reflect-value0", dec, (x1,), opset=13, dynamo=False, torchscript=True, **io)
    # The workaround: the same weights, F.pad without value= (reflect padding never uses the value).
    no_value = DecoderPad(value=None)
    no_value.conv = dec.conv
    yield Case("pad-reflect-no-value", no_value, (x1,), opset=13, dynamo=False, torchscript=True, trigger=False,
               rewrites="pad-reflect-value0", **io)
    # The other workaround: the same model, from its ONNX export.
    yield Case("pad-reflect-value0-onnx", dec, (x1,), opset=13, dynamo=False, trigger=False,
               rewrites="pad-reflect-value0", **io)
    # Control: 4-D reflect padding (nn.ReflectionPad2d) on the same TorchScript path.
    yield Case("reflpad2d", Pad("reflect2d"), (x2,), opset=13, dynamo=False, torchscript=True, trigger=False, **io)


def variant(name, module, x, opset=13, dynamo=False, **kw):
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    # Drawn in this order (x3 unused) so the inputs are those the ledger's runs measured before the entry was split.
    x1, x2, _ = padding_inputs(seed=1)
    x4 = torch.randn(1, 4, 10, 10)
    yield variant("reflpad2d-near-miss", Pad("reflect2d"), x2)
    yield variant("reflect1d-near-miss", Pad("reflect1d"), x1)
    yield variant("resnet-block-near-miss", seeded(ResnetBlock), x4)
