"""KB166: ncnn 1.0.20230517 to 1.0.20240102, on an ARM CPU with fp16 arithmetic (ARMv8.2: asimdhp), compute a
Softmax over the axis ncnn packs (the channels of a 3-D blob, the rows of a 2-D one, when their count is a multiple
of 4) wrong: every probability is off by up to about 0.4. A softmax over another axis is right, and so is the same
.param/.bin on ARMv8.0, on x86 and with fp16 storage off. YOLOv8's DFL head (a softmax over 16 bins moved to the
channel axis, then their expectation) is the model upstream hit (Tencent/ncnn#5340)."""

import torch
from torch import nn

from kb.blocks import ConvSoftmax, randn, seeded
from kb.export import Case

BINS, ANCHORS = 16, 8  # YOLOv8's reg_max = 16 bins per box side; a few anchors


class DFL(nn.Module):
    """YOLOv8's Distribution Focal Loss head (ultralytics' DFL): the 4 box sides' 16-bin logits, a softmax over the
    bins moved to dim 1 by the transpose, then the expected bin by a fixed 1x1 convolution whose weights are 0..15."""

    def __init__(self, bins=BINS):
        super().__init__()
        self.bins = bins
        self.conv = nn.Conv2d(bins, 1, 1, bias=False)
        with torch.no_grad():
            self.conv.weight.copy_(torch.arange(bins, dtype=torch.float32).view(1, bins, 1, 1))

    def forward(self, x):
        b, _, a = x.shape
        return self.conv(x.view(b, 4, self.bins, a).transpose(2, 1).softmax(1)).view(b, 4, a)


class DFLWrittenOut(DFL):
    """The workaround: the same DFL with the softmax written out, exp(x - max) / sum over the bins: ncnn's Reduction,
    UnaryOp and BinaryOp layers instead of its Softmax."""

    def forward(self, x):
        b, _, a = x.shape
        t = x.view(b, 4, self.bins, a).transpose(2, 1)
        e = (t - t.amax(1, keepdim=True)).exp()
        return self.conv(e / e.sum(1, keepdim=True)).view(b, 4, a)


class Conv1dSoftmax(nn.Module):
    """A sequence (1, C, L) through a 1x1 Conv1d, then a softmax over dim (1: the channels, ncnn's rows of a 2-D blob,
    which it packs)."""

    def __init__(self, c=12, dim=1):
        super().__init__()
        self.conv, self.dim = nn.Conv1d(c, c, 1), dim

    def forward(self, x):
        return self.conv(x).softmax(self.dim)


# Every map here has an even number of values per channel: ncnn 1.0.20250428 to 1.0.20250916 get a softmax over the
# channels of a map with an odd plane size (5x7, 3x3) wrong on every CPU, a different bug this entry does not measure.


def logits(*shape, seed=1):
    return randn(*shape, seed=seed) * 3


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    x = logits(1, 4 * BINS, ANCHORS)
    yield Case("dfl", DFL(), (x,), opset=17, dynamo=False, torchscript=True, **IO)
    yield Case("channel-softmax", seeded(ConvSoftmax), (logits(1, 8, 4, 8),), opset=17, dynamo=False,
               torchscript=True, ways=True, **IO)
    yield Case("dfl-written-out", DFLWrittenOut(), (x,), opset=17, dynamo=False, torchscript=True, trigger=False,
               rewrites="dfl", **IO)
    yield Case("last-softmax", seeded(ConvSoftmax, dim=-1), (logits(1, 8, 4, 8),), opset=17, dynamo=False,
               torchscript=True, trigger=False, **IO)


def variants():
    yield Case("dfl-80-anchors", DFL(), (logits(1, 4 * BINS, 80, seed=2),), opset=17, dynamo=False, torchscript=True,
               **IO)
    yield Case("channel-softmax-12", seeded(ConvSoftmax, 8, 12, seed=3), (logits(1, 8, 4, 6, seed=3),), opset=17,
               dynamo=False, torchscript=True, **IO)
    yield Case("channel-softmax-32", seeded(ConvSoftmax, 8, 32, seed=4), (logits(1, 8, 3, 4, seed=4),), opset=17,
               dynamo=False, torchscript=True, **IO)
    yield Case("conv1d-softmax", seeded(Conv1dSoftmax, seed=5), (logits(1, 12, 16, seed=5),), opset=17,
               dynamo=False, torchscript=True, **IO)
    # Near misses: 6 channels (not a multiple of 4: ncnn does not pack them); the softmax over the rows or the last
    # axis of a 16-channel map; a softmax over 12 features of each token.
    yield Case("channel-softmax-6-near-miss", seeded(ConvSoftmax, 8, 6, seed=6), (logits(1, 8, 4, 8, seed=6),),
               opset=17, dynamo=False, torchscript=True, **IO)
    yield Case("row-softmax-near-miss", seeded(ConvSoftmax, dim=2, seed=7), (logits(1, 8, 4, 8, seed=7),), opset=17,
               dynamo=False, torchscript=True, **IO)
    yield Case("conv1d-last-softmax-near-miss", seeded(Conv1dSoftmax, dim=-1, seed=8), (logits(1, 12, 16, seed=8),),
               opset=17, dynamo=False, torchscript=True, **IO)
