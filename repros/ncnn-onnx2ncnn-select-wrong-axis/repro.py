from torch import nn
from kb.blocks import Fn, randn, seeded
from kb.export import Case


class ConvThenIndex(nn.Module):
    """A conv head whose output drops the batch with y[0] (or indexes another dim), as postprocessing code does."""

    def __init__(self, index=lambda y: y[0]):
        super().__init__()
        self.conv, self.index = nn.Conv2d(3, 4, 1), index

    def forward(self, x):
        return self.index(self.conv(x))


def cases():
    x = randn(1, 3, 4, 5)
    yield Case("batch-index", seeded(ConvThenIndex), (x,), dynamo=False, ways=True)
    yield Case("select-last-dim", seeded(ConvThenIndex, lambda y: y.select(-1, 1)), (x,), dynamo=False)
    # Workarounds: keep the batch axis (ncnn has none), or spell the last dim positively.
    yield Case("keep-batch", seeded(ConvThenIndex, lambda y: y), (x,), dynamo=False, trigger=False,
               rewrites="batch-index")
    yield Case("positive-dim", seeded(ConvThenIndex, lambda y: y[..., 1]), (x,), dynamo=False, trigger=False,
               rewrites="select-last-dim")


def megvii_shuffle(x):
    """ShuffleNetV2's channel_shuffle in the Megvii code: x[0] and x[1] right after a 5-D reshape."""
    b, c, h, w = x.shape
    x = x.reshape(b * c // 2, 2, h * w).permute(1, 0, 2).reshape(2, -1, c // 2, h, w)
    return x[0], x[1]


def variants():
    x = randn(1, 3, 4, 5, seed=2)
    yield Case("select-minus-2", seeded(ConvThenIndex, lambda y: y.select(-2, 0)), (x,), dynamo=False)
    yield Case("input-index", Fn(lambda t: t[0]), (x,), dynamo=False)
    yield Case("channel-near-miss", seeded(ConvThenIndex, lambda y: y[:, 1]), (x,), dynamo=False)
    yield Case("megvii-shuffle-near-miss", Fn(megvii_shuffle), (randn(1, 8, 4, 4, seed=2),), dynamo=False)
    yield Case("last-token-near-miss", seeded(ConvThenIndex, lambda y: y[:, :, -1]), (x,), dynamo=False)
