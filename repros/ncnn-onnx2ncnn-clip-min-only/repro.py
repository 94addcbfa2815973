"""KB081: torch.onnx.export(dynamo=True) writes torch.clamp(x, min=a) with a float bound as a Clip with two inputs
(x, min): the optional max is left off, not given as an empty name. onnx2ncnn's Clip writer reads node.input(2) for
every Clip with more than one input, so it reads past the end of the node's input list, and protobuf aborts it.
The TorchScript exporter writes the same clamp as Clip(x, min, "") with an empty third input, which converts.
"""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import Fn
from kb.export import Case

C, H = 4, 6
INLINE = {"external_data": False}  # dynamo exports: weights inside the .onnx (not ncnn-onnx2ncnn-external-data)
IO = dict(input_names=["in0"], output_names=["out0"])


class ClampMin(nn.Module):
    """torch.clamp(x, min=lo): only a lower bound."""

    def __init__(self, lo=0.5):
        super().__init__()
        self.lo = lo

    def forward(self, x):
        return torch.clamp(x, min=self.lo)


class ClampMinMethod(nn.Module):
    """x.clamp_min(lo), the method form."""

    def forward(self, x):
        return x.clamp_min(0.25)


class ClampMax(nn.Module):
    """Near miss: only an upper bound; dynamo writes Clip(x, "", max) with an empty min, which converts."""

    def forward(self, x):
        return torch.clamp(x, max=0.5)


class ClampBoth(nn.Module):
    def __init__(self, lo=-0.5, hi=0.5):
        super().__init__()
        self.lo, self.hi = lo, hi

    def forward(self, x):
        return torch.clamp(x, min=self.lo, max=self.hi)


class Maximum(nn.Module):
    """The workaround: max(x, lo) with a scalar tensor, which dynamo writes as Max (an ncnn BinaryOp)."""

    def forward(self, x):
        return torch.maximum(x, torch.tensor(0.5))


class ClampMinInt(nn.Module):
    """Near miss: an integer bound; dynamo writes Max(x, 0), not a Clip."""

    def forward(self, x):
        return torch.clamp(x, min=0)


class ClampMinTensor(nn.Module):
    """Near miss: a per-channel tensor bound (a parameter); both exporters write Max(x, bound)."""

    def __init__(self):
        super().__init__()
        self.lo = nn.Parameter(torch.linspace(-0.5, 0.5, C).reshape(1, C, 1, 1))

    def forward(self, x):
        return torch.clamp(x, min=self.lo)


class LogMel(nn.Module):
    """A spectrogram front end: conv, then log(clamp(x, min=1e-5)), as TTS and ASR models compress magnitudes."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.conv = nn.Conv2d(C, C, 3, padding=1)

    def forward(self, x):
        return torch.log(torch.clamp(self.conv(x).abs(), min=1e-5))


class NormalizedEmbedding(nn.Module):
    """An embedding head: conv, global pool, F.normalize (whose norm is clamp_min(eps))."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(4)
        self.conv = nn.Conv2d(C, 8, 3, padding=1)

    def forward(self, x):
        return F.normalize(self.conv(x).mean((2, 3)), dim=1)


class ConvClampBlock(nn.Module):
    """A conv block with a one-sided clamp as its activation (a thresholded ReLU), then another conv."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.conv1 = nn.Conv2d(C, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, C, 1)

    def forward(self, x):
        return self.conv2(torch.clamp(self.conv1(x), min=0.0))


def x4(seed=0):
    torch.manual_seed(100 + seed)
    return torch.randn(1, C, H, H)


DYN = dict(dynamo=True, export_kwargs=INLINE, **IO)  # torch 2.13's default exporter, opset 18 unless stated


def cases():
    yield Case("clamp-min-dynamo", ClampMin(), (x4(),), opset=18, torchscript=True, **DYN)
    # Workarounds, fed the same input, judged against clamp-min-dynamo's torch output.
    yield Case("clamp-both-bounds", ClampBoth(0.5, float("inf")), (x4(),), opset=18, trigger=False,
               rewrites="clamp-min-dynamo", **DYN)
    yield Case("maximum", Maximum(), (x4(),), opset=18, trigger=False, rewrites="clamp-min-dynamo", **DYN)
    yield Case("clamp-min-torchscript", ClampMin(), (x4(),), opset=18, dynamo=False, trigger=False,
               rewrites="clamp-min-dynamo", **IO)
    # Controls on the same path: Clips from the same exporter with both bounds, or with the min left empty.
    yield Case("relu6-dynamo", Fn(F.relu6), (x4(),), opset=18, trigger=False, **DYN)
    yield Case("clamp-max-dynamo", ClampMax(), (x4(),), opset=18, trigger=False, **DYN)


def variants():
    x = (x4(1),)
    yield Case("clamp-min-opset18", ClampMin(-0.25), x, opset=18, **DYN)
    yield Case("clamp-min-opset17", ClampMin(-0.25), x, opset=17, **DYN)
    yield Case("clamp-min-opset20", ClampMin(-0.25), x, opset=20, **DYN)
    yield Case("clamp-min-onnxsim", ClampMin(-0.25), x, opset=18, simplify=True, **DYN)
    yield Case("clamp-min-method", ClampMinMethod(), x, opset=18, **DYN)
    yield Case("clamp-min-float-zero", ClampMin(0.0), x, opset=18, **DYN)
    yield Case("conv-clamp-block", ConvClampBlock(), x, opset=18, **DYN)
    yield Case("log-mel-clamp", LogMel(), x, opset=18, **DYN)
    yield Case("normalize-embedding", NormalizedEmbedding(), x, opset=18, **DYN)
    # Near misses: the same exporter, where the Clip has both inputs (or an empty min), or no Clip is written.
    yield Case("clamp-max-near-miss", ClampMax(), x, opset=18, **DYN)
    yield Case("clamp-both-near-miss", ClampBoth(), x, opset=18, **DYN)
    yield Case("relu6-near-miss", Fn(F.relu6), x, opset=18, **DYN)
    yield Case("hardtanh-near-miss", Fn(F.hardtanh), x, opset=18, **DYN)
    yield Case("clamp-min-int-near-miss", ClampMinInt(), x, opset=18, **DYN)
    yield Case("clamp-min-tensor-near-miss", ClampMinTensor(), x, opset=18, **DYN)
    # The TorchScript exporter: Clip(x, min, "") with an empty max, which converts.
    yield Case("clamp-min-torchscript-opset13-near-miss", ClampMin(-0.25), x, opset=13, dynamo=False, **IO)
    yield Case("clamp-min-torchscript-onnxsim-near-miss", ClampMin(-0.25), x, opset=18, dynamo=False, simplify=True,
               **IO)
