"""KB167: ncnn 1.0.20250428 to 1.0.20250916 compute a Softmax over the outermost axis of a blob (the channels of a
map, the rows of a sequence: a softmax over dim 1 of a batch-1 tensor) wrong when the rest of the blob holds an odd
number of values (a 7x7 map, a sequence of 15): the second half of the positions is left as it was (logits, not
probabilities), on x86 and ARM alike, packed or not. An even map (8x8) and a softmax over the last axis are right,
and so is every other release measured (1.0.20221128 to 1.0.20241226, 1.0.20260114 and later)."""

from torch import nn

from kb.blocks import ConvSoftmax, randn, seeded
from kb.export import Case


class SegHead(ConvSoftmax):
    """A segmentation head: a 1x1 convolution to `classes` scores per pixel, then softmax over the classes (dim 1)."""

    def __init__(self, c_in=8, classes=5, dim=1):
        super().__init__(c_in, classes, dim)


class WrittenOut(SegHead):
    """The workaround: the same head with the softmax written out, exp(x - max) / sum over dim 1."""

    def forward(self, x):
        s = self.conv(x)
        e = (s - s.amax(1, keepdim=True)).exp()
        return e / e.sum(1, keepdim=True)


class SeqHead(nn.Module):
    """A sequence (1, C, L) through a 1x1 Conv1d, then softmax over the C channels (dim 1): ncnn's rows of a 2-D blob."""

    def __init__(self, c=6):
        super().__init__()
        self.conv = nn.Conv1d(c, c, 1)

    def forward(self, x):
        return self.conv(x).softmax(1)


def logits(*shape, seed=1):
    return randn(*shape, seed=seed) * 3


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    x = logits(1, 8, 7, 7)
    yield Case("seg-head", seeded(SegHead), (x,), opset=17, dynamo=False, torchscript=True, ways=True, **IO)
    yield Case("seq-head", seeded(SeqHead, seed=1), (logits(1, 6, 15, seed=2),), opset=17, dynamo=False,
               torchscript=True, **IO)
    yield Case("seg-head-written-out", seeded(WrittenOut), (x,), opset=17, dynamo=False, torchscript=True,
               trigger=False, rewrites="seg-head", **IO)
    yield Case("last-axis", seeded(SegHead, dim=-1), (x,), opset=17, dynamo=False, torchscript=True, trigger=False,
               **IO)


def variants():
    yield Case("seg-head-13x13", seeded(SegHead, 8, 21, seed=3), (logits(1, 8, 13, 13, seed=3),), opset=17,
               dynamo=False, torchscript=True, **IO)
    yield Case("seg-head-16-classes-5x7", seeded(SegHead, 8, 16, seed=4), (logits(1, 8, 5, 7, seed=4),), opset=17,
               dynamo=False, torchscript=True, **IO)
    yield Case("seg-head-1x9", seeded(SegHead, seed=5), (logits(1, 8, 1, 9, seed=5),), opset=17, dynamo=False,
               torchscript=True, **IO)
    yield Case("seq-head-odd-33", seeded(SeqHead, 4, seed=6), (logits(1, 4, 33, seed=6),), opset=17, dynamo=False,
               torchscript=True, **IO)
    # Near misses: an even plane (8x8, 6x7), a single pixel, the softmax over the rows of the map.
    yield Case("seg-head-8x8-near-miss", seeded(SegHead, seed=7), (logits(1, 8, 8, 8, seed=7),), opset=17,
               dynamo=False, torchscript=True, **IO)
    yield Case("seg-head-6x7-near-miss", seeded(SegHead, seed=8), (logits(1, 8, 6, 7, seed=8),), opset=17,
               dynamo=False, torchscript=True, **IO)
    yield Case("seg-head-1x1-near-miss", seeded(SegHead, seed=9), (logits(1, 8, 1, 1, seed=9),), opset=17,
               dynamo=False, torchscript=True, **IO)
    yield Case("row-softmax-near-miss", seeded(SegHead, dim=2, seed=10), (logits(1, 8, 7, 7, seed=10),), opset=17,
               dynamo=False, torchscript=True, **IO)
