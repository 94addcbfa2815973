import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class ConvTimesConst(nn.Module):
    """A conv, then a product with a constant tensor (a learned template, an anchor grid)."""

    def __init__(self, shape, add=False):
        super().__init__()
        self.conv, self.add = nn.Conv2d(3, 4, 3, padding=1), add
        self.register_buffer("c", torch.randn(*shape))

    def forward(self, x):
        y = self.conv(x)
        return y + self.c if self.add else y * self.c


class AnchorGrid(nn.Module):
    """YOLOv5's Detect decode: (1, 3 * 2, 5, 5) to (1, 3, 5, 5, 2), sigmoid, times a 5-D anchor grid constant."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 1)
        self.register_buffer("anchor_grid", torch.rand(1, 3, 1, 1, 2) * 10)

    def forward(self, x):
        y = self.conv(x).view(1, 3, 2, 5, 5).permute(0, 1, 3, 4, 2)
        return y.sigmoid() * self.anchor_grid


class TimesConst5D(nn.Module):
    """A 5-D input times a 5-D constant, with no weighted layer after it (nothing left to fail to load)."""

    def __init__(self, add=False):
        super().__init__()
        self.add = add
        self.register_buffer("c", torch.randn(1, 2, 3, 4, 5))

    def forward(self, x):
        return x + self.c if self.add else x * self.c


def cases():
    yield Case("batch-const", seeded(ConvTimesConst, (2, 4, 5, 5)), (randn(1, 3, 5, 5),), dynamo=False, ways=True)
    yield Case("rank5-times-const", seeded(TimesConst5D), (randn(1, 2, 3, 4, 5),), dynamo=False)


def variants():
    x = randn(1, 3, 5, 5, seed=2)
    yield Case("batch-const-add", seeded(ConvTimesConst, (3, 4, 1, 1), add=True), (x,), dynamo=False)
    yield Case("anchor-grid-5d", seeded(AnchorGrid), (x,), dynamo=False)
    yield Case("rank5-plus-const", seeded(TimesConst5D, add=True), (randn(1, 2, 3, 4, 5, seed=3),), dynamo=False)
    yield Case("leading-1-near-miss", seeded(ConvTimesConst, (1, 4, 5, 5)), (x,), dynamo=False)
    yield Case("channel-const-near-miss", seeded(ConvTimesConst, (4, 1, 1)), (x,), dynamo=False)
