import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class PoolCat(nn.Module):
    """As in Tencent/ncnn#3235: the global average pool of a 7x7 map beside a 7x7 conv of it, concatenated."""

    def __init__(self, pool=F.adaptive_avg_pool2d, keep=False):
        super().__init__()
        self.conv, self.pool, self.keep = nn.Conv2d(16, 32, 7), pool, keep

    def forward(self, x):
        p = self.pool(x, 1)
        return torch.cat([p.reshape(1, 16, 1, 1) if self.keep else p, self.conv(x)], 1)


class PoolConvCat(nn.Module):
    """The ASPP image-pooling branch on a 1x1 map: pool, 1x1 conv, ReLU, concat with the other branch."""

    def __init__(self):
        super().__init__()
        self.conv, self.other = nn.Conv2d(16, 16, 1), nn.Conv2d(16, 32, 7)

    def forward(self, x):
        return torch.cat([torch.relu(self.conv(F.adaptive_avg_pool2d(x, 1))), self.other(x)], 1)


class TwoPools(nn.Module):
    """Near miss: both inputs of the concat are global pools."""

    def forward(self, x):
        return torch.cat([F.adaptive_avg_pool2d(x, 1), F.adaptive_avg_pool2d(torch.relu(x), 1)], 1)


class PoolUpsample(nn.Module):
    """Near miss: DeepLab's ASPP pooling branch resized back to the map before the concat."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        p = torch.relu(self.conv(F.adaptive_avg_pool2d(x, 1)))
        return torch.cat([x, F.interpolate(p, scale_factor=7.0, mode="bilinear")], 1)


def cases():
    x = randn(1, 16, 7, 7)
    yield Case("pool-cat", seeded(PoolCat), (x,), dynamo=False, ways=True)
    yield Case("reshape-4d", seeded(PoolCat, keep=True), (x,), dynamo=False, trigger=False, rewrites="pool-cat")


def variants():
    x = randn(1, 16, 7, 7, seed=2)
    yield Case("maxpool-near-miss", seeded(PoolCat, pool=F.adaptive_max_pool2d), (x,), dynamo=False)
    yield Case("aspp-1x1", seeded(PoolConvCat), (x,), dynamo=False)
    yield Case("two-pools-near-miss", TwoPools(), (x,), dynamo=False)
    yield Case("upsample-near-miss", seeded(PoolUpsample), (x,), dynamo=False)
