"""KB165: converted for dynamic shapes (inputshape2=), pnnx removes a slice along a dynamic axis whose output length
is unknown too (x[:, :, :-1], x[:, :, 1:]): its no-op slice pass compares the input's and the output's shapes, and
(1, 8, ?) equals (1, 8, ?). ncnn then keeps the whole axis."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import Fn, randn, seeded
from kb.export import Case

DYNAMIC = {"dynamic_axes": {"in0": {2: "t"}}}  # the time axis varies, as pnnx's inputshape2 says
IO = dict(input_names=["in0"], output_names=["out0"], dynamo=False)


class SamePadConv(nn.Module):
    """wav2vec2 / HuBERT's positional convolution: an even kernel padded k // 2 on both sides, then the one extra
    frame trimmed (their SamePadLayer), then GELU. `asymmetric`: the same convolution padded (2, 1) instead."""

    def __init__(self, asymmetric=False):
        super().__init__()
        self.asymmetric = asymmetric
        self.conv = nn.Conv1d(8, 8, 4, padding=0 if asymmetric else 2, groups=2)

    def forward(self, x):
        if self.asymmetric:
            return F.gelu(self.conv(F.pad(x, (2, 1))))
        return F.gelu(self.conv(x)[:, :, :-1])


def x():
    return randn(1, 8, 20)


def cases():
    yield Case("same-pad-conv", seeded(SamePadConv), (x(),), opset=17, torchscript=True, export_kwargs=DYNAMIC, **IO)
    # The workaround: the same weights (seeded alike), padded (2, 1) before a convolution without padding.
    yield Case("asymmetric-pad", seeded(SamePadConv, True), (x(),), opset=17, torchscript=True,
               export_kwargs=DYNAMIC, rewrites="same-pad-conv", trigger=False, **IO)


def variants():
    # From the ONNX export (dynamic axis 2) and, for names ending in -ts, from the traced TorchScript.
    yield Case("trim-last", Fn(lambda t: torch.relu(t)[:, :, :-1]), (x(),), opset=17, export_kwargs=DYNAMIC, **IO)
    yield Case("trim-last-ts", Fn(lambda t: torch.relu(t)[:, :, :-1]), (x(),), opset=17, torchscript=True, **IO)
    yield Case("drop-first", Fn(lambda t: torch.relu(t)[:, :, 1:]), (x(),), opset=17, export_kwargs=DYNAMIC, **IO)
    yield Case("drop-first-ts", Fn(lambda t: torch.relu(t)[:, :, 1:]), (x(),), opset=17, torchscript=True, **IO)
    yield Case("drop-two-opset13", Fn(lambda t: torch.relu(t)[..., 2:]), (x(),), opset=13, export_kwargs=DYNAMIC, **IO)
    yield Case("trim-last-onnxsim", Fn(lambda t: torch.relu(t)[:, :, :-1]), (x(),), opset=17, simplify=True,
               export_kwargs=DYNAMIC, **IO)
    yield Case("same-pad-conv-opset13", seeded(SamePadConv), (x(),), opset=13, export_kwargs=DYNAMIC, **IO)
    # Near misses: an output of a fixed length, and a slice along a fixed axis.
    yield Case("fixed-window", Fn(lambda t: torch.relu(t)[:, :, 2:5]), (x(),), opset=17, export_kwargs=DYNAMIC, **IO)
    yield Case("fixed-window-ts", Fn(lambda t: torch.relu(t)[:, :, 2:5]), (x(),), opset=17, torchscript=True, **IO)
    yield Case("last-three", Fn(lambda t: torch.relu(t)[:, :, -3:]), (x(),), opset=17, export_kwargs=DYNAMIC, **IO)
    yield Case("channel-slice", Fn(lambda t: torch.relu(t)[:, 1:]), (x(),), opset=17, export_kwargs=DYNAMIC, **IO)
    yield Case("channel-slice-ts", Fn(lambda t: torch.relu(t)[:, 1:]), (x(),), opset=17, torchscript=True, **IO)
