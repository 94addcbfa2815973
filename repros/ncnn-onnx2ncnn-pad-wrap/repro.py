"""KB106: torch's dynamo exporter writes circular padding (F.pad(mode="circular"), Conv2d(padding_mode="circular"))
as one ONNX Pad with mode="wrap". onnx2ncnn's Pad converter knows constant, edge and reflect; any other mode falls
through to constant, so ncnn pads with zeros and the border comes out wrong without a message."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

IO = dict(input_names=["in0"], output_names=["out0"])
INLINE = {"external_data": False}  # dynamo exports: weights inside the .onnx (not ncnn-onnx2ncnn-external-data)


class CircularConv(nn.Module):
    """A 3x3 conv with circular padding (panoramas, tori, periodic fields), then ReLU."""

    def __init__(self, mode="circular", pad=1):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=pad, padding_mode=mode)

    def forward(self, x):
        return torch.relu(self.conv(x))


class PadCircular(nn.Module):
    """F.pad(mode="circular") by hand, then a conv without padding; `by_cat` writes the wrap with slices and cat."""

    def __init__(self, pads=(1, 1, 1, 1), by_cat=False, width_only=False):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.pads, self.by_cat, self.width_only = pads, by_cat, width_only

    def forward(self, x):
        left, right, top, bottom = self.pads
        if self.by_cat:  # the workaround: the same wrap written with slices and cat
            x = torch.cat([x[..., -left:], x, x[..., :right]], dim=3)
            if not self.width_only:
                x = torch.cat([x[..., -top:, :], x, x[..., :bottom, :]], dim=2)
        else:
            x = F.pad(x, self.pads, mode="circular")
        return self.conv(x)


class Circular1d(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 4, 5, padding=2, padding_mode="circular")

    def forward(self, x):
        return self.conv(x)


def cases():
    x = randn(1, 3, 10, 10)
    yield Case("pad-circular", seeded(PadCircular), (x,), opset=18, dynamo=True, export_kwargs=INLINE, **IO)
    # Workarounds, the same weights and input: the wrap written with slices and cat; the TorchScript exporter.
    yield Case("pad-by-cat", seeded(PadCircular, by_cat=True), (x,), opset=18, dynamo=True, export_kwargs=INLINE,
               trigger=False, rewrites="pad-circular", **IO)
    yield Case("pad-circular-torchscript", seeded(PadCircular), (x,), opset=13, dynamo=False, trigger=False,
               rewrites="pad-circular", **IO)
    yield Case("pad-reflect", seeded(CircularConv, mode="reflect"), (x,), opset=18, dynamo=True, export_kwargs=INLINE,
               trigger=False, **IO)


def variants():
    x = randn(1, 3, 10, 10, seed=2)
    yield Case("conv-padding-mode", seeded(CircularConv, seed=3), (x,), opset=18, dynamo=True, export_kwargs=INLINE,
               **IO)
    yield Case("conv-padding-mode-opset20", seeded(CircularConv, seed=3), (x,), opset=20, dynamo=True,
               export_kwargs=INLINE, **IO)
    yield Case("conv-padding-mode-onnxsim", seeded(CircularConv, seed=3), (x,), opset=18, dynamo=True,
               export_kwargs=INLINE, simplify=True, **IO)
    yield Case("conv-padding-2", seeded(CircularConv, seed=3, pad=2), (x,), opset=18, dynamo=True,
               export_kwargs=INLINE, **IO)
    yield Case("f-pad", seeded(PadCircular, seed=3), (x,), opset=18, dynamo=True, export_kwargs=INLINE, **IO)
    yield Case("f-pad-width-only", seeded(PadCircular, seed=3, pads=(2, 2, 0, 0)), (x,), opset=18, dynamo=True,
               export_kwargs=INLINE, **IO)
    yield Case("conv1d", seeded(Circular1d, seed=3), (randn(1, 3, 16, seed=2),), opset=18, dynamo=True,
               export_kwargs=INLINE, **IO)
    # Near misses: reflect and replicate padding modes, and zeros.
    yield Case("reflect-near-miss", seeded(CircularConv, seed=3, mode="reflect"), (x,), opset=18, dynamo=True,
               export_kwargs=INLINE, **IO)
    yield Case("replicate-near-miss", seeded(CircularConv, seed=3, mode="replicate"), (x,), opset=18, dynamo=True,
               export_kwargs=INLINE, **IO)
    yield Case("zeros-near-miss", seeded(CircularConv, seed=3, mode="zeros"), (x,), opset=18, dynamo=True,
               export_kwargs=INLINE, **IO)
