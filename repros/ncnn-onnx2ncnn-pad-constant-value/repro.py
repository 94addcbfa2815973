"""KB105: from opset 11, ONNX Pad takes its pads and its constant value as inputs. onnx2ncnn reads the pads input
but takes the value only from the old `value` attribute (so always 0), and leaves the constant_value input in
the graph as a second bottom blob of ncnn's Padding layer."""

import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

IO = dict(input_names=["in0"], output_names=["out0"])
INLINE = {"external_data": False}  # dynamo exports: weights inside the .onnx (not ncnn-onnx2ncnn-external-data)


class PadThenConv(nn.Module):
    """F.pad with a constant value, then a 3x3 conv: the padding a 'same' conv with a non-zero border needs."""

    def __init__(self, pads=(1, 2, 1, 0), value=0.5, mode="constant"):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.pads, self.value, self.mode = pads, value, mode

    def forward(self, x):
        if self.mode == "constant":
            y = F.pad(x, self.pads, value=self.value)
        else:
            y = F.pad(x, self.pads, mode=self.mode)
        return self.conv(y)


class PadMaxPool(nn.Module):
    """Pad with -inf before a max pool, as 'same' max pooling is written."""

    def forward(self, x):
        return F.max_pool2d(F.pad(x, (0, 1, 0, 1), value=float("-inf")), 2, 2)


class Pad1d(nn.Module):
    """nn.ConstantPad1d on (N, C, L), as a causal 1-D conv pads its past."""

    def __init__(self):
        super().__init__()
        self.pad = nn.ConstantPad1d((2, 0), 0.25)
        self.conv = nn.Conv1d(3, 4, 3)

    def forward(self, x):
        return self.conv(self.pad(x))


class ZeroPadPool(nn.Module):
    """nn.ZeroPad2d before an average pool: a zero Pad that no exporter folds away."""

    def forward(self, x):
        return F.avg_pool2d(nn.ZeroPad2d((0, 1, 0, 1))(x), 2, 2)


class ConvPadding(PadThenConv):
    """Control: the conv's own zero padding (a Conv pads attribute, no Pad node)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return self.conv(x)


def cases():
    x = randn(1, 3, 10, 10)
    yield Case("pad-value", seeded(PadThenConv), (x,), opset=18, dynamo=True, export_kwargs=INLINE, **IO)
    # Workaround: the same module exported at opset 10, where the value is still an attribute of Pad.
    yield Case("pad-value-opset10", seeded(PadThenConv), (x,), opset=10, dynamo=False, trigger=False,
               rewrites="pad-value", **IO)
    yield Case("conv-padding", seeded(ConvPadding), (x,), opset=18, dynamo=True, export_kwargs=INLINE, trigger=False,
               **IO)


def variants():
    x = randn(1, 3, 10, 10, seed=2)
    yield Case("dynamo-opset18", seeded(PadThenConv, seed=3), (x,), opset=18, dynamo=True, export_kwargs=INLINE, **IO)
    yield Case("dynamo-opset20", seeded(PadThenConv, seed=3), (x,), opset=20, dynamo=True, export_kwargs=INLINE, **IO)
    yield Case("torchscript-opset13-onnxsim", seeded(PadThenConv, seed=3), (x,), opset=13, dynamo=False,
               simplify=True, **IO)
    yield Case("torchscript-opset11-onnxsim", seeded(PadThenConv, seed=3), (x,), opset=11, dynamo=False,
               simplify=True, **IO)
    # Near misses: a zero F.pad before a conv, which the dynamo exporter's optimizer and onnxsim fold into the
    # Conv's pads (no Pad node is left); reflect and edge padding (no constant value input); opset 10.
    yield Case("zero-pad-fused-near-miss", seeded(PadThenConv, seed=3, value=0.0), (x,), opset=18, dynamo=True,
               export_kwargs=INLINE, **IO)
    yield Case("zero-pad-onnxsim-fused-near-miss", seeded(PadThenConv, seed=3, value=0.0), (x,), opset=13,
               dynamo=False, simplify=True, **IO)
    yield Case("neg-inf-maxpool", seeded(PadMaxPool, seed=3), (x,), opset=18, dynamo=True, export_kwargs=INLINE, **IO)
    yield Case("zero-pad-avgpool", seeded(ZeroPadPool, seed=3), (x,), opset=18, dynamo=True, export_kwargs=INLINE,
               **IO)
    yield Case("pad1d", seeded(Pad1d, seed=3), (randn(1, 3, 12, seed=2),), opset=18, dynamo=True, export_kwargs=INLINE,
               **IO)
    yield Case("reflect-near-miss", seeded(PadThenConv, seed=3, mode="reflect"), (x,), opset=18, dynamo=True,
               export_kwargs=INLINE, **IO)
    yield Case("replicate-near-miss", seeded(PadThenConv, seed=3, mode="replicate"), (x,), opset=18, dynamo=True,
               export_kwargs=INLINE, **IO)
    yield Case("opset10-near-miss", seeded(PadThenConv, seed=3), (x,), opset=10, dynamo=False, **IO)
