"""KB111: circular padding exported by dynamo is an ONNX Pad with mode="wrap" (opset 19's mode, which the
exporter writes at opset 18 too); mnnconvert knows only the constant and reflect modes there, prints "MNN only
support ['constant', 'reflect'] Pad mode" and writes no model. The TorchScript exporter writes the same padding
with Slice and Concat, which MNN converts."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import ConvThen, Fn, randn, seeded
from kb.export import Case

PADS = (1, 1, 2, 2)  # left, right, top, bottom


def image(seed=1):
    return randn(1, 3, 12, 12, seed=seed)


def net(then, seed=0, dim=2):
    """A convolution with seeded weights (1-, 2- or 3-D), then `then` on its output."""
    conv = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[dim]
    return seeded(lambda: ConvThen(conv(3, 8, 3, padding=1), then), seed=seed)


def circular(t, pads=PADS):
    return F.pad(t, pads, mode="circular")


def circular_by_hand(t):
    """The workaround: the same wrap written with slices and cat (W by 1, then H by 2)."""
    t = torch.cat([t[..., -1:], t, t[..., :1]], dim=-1)
    return torch.cat([t[..., -2:, :], t, t[..., :2, :]], dim=-2)


class CircularConv(nn.Module):
    """A convolution with padding_mode="circular" (as in periodic / panorama / toroidal models), then ReLU."""

    def __init__(self, dim=2):
        super().__init__()
        conv = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[dim]
        self.conv = conv(3, 8, 3, padding=1, padding_mode="circular")

    def forward(self, x):
        return torch.relu(self.conv(x))


def cases():
    x = image()
    io = dict(input_names=["x"], output_names=["y"])
    yield Case("circular-pad", net(Fn(circular)), (x,), **io, opset=18, dynamo=True)
    yield Case("circular-conv", seeded(CircularConv), (x,), **io, opset=18, dynamo=True)
    # Control: reflect padding from the same exporter (Pad mode="reflect").
    yield Case("reflect-pad", net(Fn(lambda t: F.pad(t, PADS, mode="reflect"))), (x,), **io, opset=18, dynamo=True,
               trigger=False)
    # Workarounds: the TorchScript exporter (Slice and Concat), or the wrap written by hand under dynamo.
    yield Case("circular-pad-torchscript", net(Fn(circular)), (x,), **io, opset=17, dynamo=False, trigger=False,
               rewrites="circular-pad")
    yield Case("circular-conv-torchscript", seeded(CircularConv), (x,), **io, opset=17, dynamo=False,
               trigger=False, rewrites="circular-conv")
    yield Case("circular-pad-by-hand", net(Fn(circular_by_hand)), (x,), **io, opset=18, dynamo=True, trigger=False,
               rewrites="circular-pad")


def variants():
    x = image(seed=2)
    io = dict(input_names=["x"], output_names=["y"])
    yield Case("opset19", net(Fn(circular), seed=3), (x,), **io, opset=19, dynamo=True)
    yield Case("opset20", net(Fn(circular), seed=3), (x,), **io, opset=20, dynamo=True)
    yield Case("wide-pad", net(Fn(lambda t: circular(t, (3, 3, 1, 1))), seed=3), (x,), **io, opset=18, dynamo=True)
    yield Case("pad-1d", net(Fn(lambda t: circular(t, (2, 2))), seed=3, dim=1), (randn(1, 3, 20, seed=2),), **io,
               opset=18, dynamo=True)
    yield Case("height-only", net(Fn(lambda t: circular(t, (0, 0, 2, 2))), seed=3), (x,), **io, opset=18,
               dynamo=True)
    yield Case("conv1d-circular", seeded(CircularConv, dim=1, seed=3), (randn(1, 3, 20, seed=2),), **io, opset=18,
               dynamo=True)
    yield Case("conv-circular-opset20", seeded(CircularConv, seed=3), (x,), **io, opset=20, dynamo=True)
    yield Case("input-pad", Fn(circular), (x,), **io, opset=18, dynamo=True)
    # Near misses: TorchScript's circular padding (Slice, Concat), and dynamo's other modes.
    yield Case("torchscript-near-miss", net(Fn(circular), seed=3), (x,), **io, opset=17, dynamo=False)
    yield Case("conv-torchscript-near-miss", seeded(CircularConv, seed=3), (x,), **io, opset=17, dynamo=False)
    yield Case("replicate-near-miss", net(Fn(lambda t: F.pad(t, PADS, mode="replicate")), seed=3), (x,), **io,
               opset=18, dynamo=True)
    yield Case("constant-near-miss", net(Fn(lambda t: F.pad(t, PADS, value=0.5)), seed=3), (x,), **io, opset=18,
               dynamo=True)
