"""KB207: ncnn 1.0.20260526 and later, on x86 with use_bf16_storage on, pad a blob with another value than the one the
model asks for (F.pad(value=0.5) pads with 0, value=-3 with about 26): the Padding layer's bf16 path garbles its
constant. A zero pad, a convolution's own padding and fp32 (the default) are right."""

import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class ConvPad(nn.Module):
    """A 1x1 convolution over `c` channels, then F.pad of its map with a constant `value` (`pad` as F.pad takes it)."""

    def __init__(self, c=16, value=0.5, pad=(1, 1, 1, 1), then_conv=False):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)
        self.value, self.pad = value, pad
        self.after = nn.Conv2d(c, c, 3) if then_conv else nn.Identity()

    def forward(self, x):
        return self.after(F.pad(self.conv(x), self.pad, value=self.value))


class ShiftedPad(ConvPad):
    """The workaround: pad x - value with zeros, then add value back (the same function)."""

    def forward(self, x):
        return self.after(F.pad(self.conv(x) - self.value, self.pad) + self.value)


class SeqPad(nn.Module):
    """A Conv1d over a (1, C, L) sequence, then F.pad of its last axis with 1.0."""

    def __init__(self, c=16):
        super().__init__()
        self.conv = nn.Conv1d(c, c, 1)

    def forward(self, x):
        return F.pad(self.conv(x), (2, 2), value=1.0)


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    x = randn(1, 16, 7, 9)
    yield Case("pad-half", seeded(ConvPad), (x,), opset=13, dynamo=False, torchscript=True, ways=True, **IO)
    yield Case("pad-half-shifted", seeded(ShiftedPad), (x,), opset=13, dynamo=False, torchscript=True,
               trigger=False, rewrites="pad-half", **IO)


def variants():
    x = randn(1, 16, 7, 9)
    yield Case("pad-minus-3", seeded(ConvPad, value=-3.0, pad=(1, 2, 0, 0)), (x,), opset=13, dynamo=False,
               torchscript=True, **IO)
    yield Case("pad-one-8-channels", seeded(ConvPad, 8, value=1.0), (randn(1, 8, 7, 9),), opset=13, dynamo=False,
               torchscript=True, **IO)
    yield Case("pad-one-3-channels", seeded(ConvPad, 3, value=1.0), (randn(1, 3, 7, 9),), opset=13, dynamo=False,
               torchscript=True, **IO)
    yield Case("pad-channels", seeded(ConvPad, value=1.0, pad=(0, 0, 0, 0, 0, 16)), (x,), opset=13, dynamo=False,
               torchscript=True, **IO)
    yield Case("pad-then-conv", seeded(ConvPad, value=1.0, then_conv=True), (x,), opset=13, dynamo=False,
               torchscript=True, **IO)
    yield Case("seq-pad-one", seeded(SeqPad), (randn(1, 16, 11),), opset=13, dynamo=False, torchscript=True, **IO)
    # Near misses: a zero pad, and the workaround's model.
    yield Case("pad-zero-near-miss", seeded(ConvPad, value=0.0), (x,), opset=13, dynamo=False, torchscript=True, **IO)
    yield Case("pad-half-shifted-near-miss", seeded(ShiftedPad), (x,), opset=13, dynamo=False, torchscript=True,
               **IO)
