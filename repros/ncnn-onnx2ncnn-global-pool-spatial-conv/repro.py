"""KB197: a global average pool followed by a padded 3x3 (or larger) convolution. ncnn's global Pooling outputs a
1-D blob of C values, which onnx2ncnn does not reshape; the Convolution then runs on that 1-D blob, and with a kernel
larger than 1x1 ncnn gives no output (Extractor::extract returns -100)."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

C, C_OUT = 16, 8


class PoolConv(nn.Module):
    """Global context: AdaptiveAvgPool2d(1), then a convolution over the (1, C, 1, 1) result."""

    def __init__(self, k=3, reshape=False, relu=False):
        super().__init__()
        self.conv, self.reshape, self.relu = nn.Conv2d(C, C_OUT, k, padding=k // 2), reshape, relu

    def forward(self, x):
        p = F.adaptive_avg_pool2d(x, 1)
        if self.reshape:  # the workaround: a Reshape to 4-D, which onnx2ncnn writes as a 3-D blob
            p = p.reshape(1, C, 1, 1)
        if self.relu:
            p = torch.relu(p)
        return self.conv(p)


def cases():
    x = randn(1, C, 7, 7)
    yield Case("pool-conv3x3", seeded(PoolConv), (x,), opset=13, dynamo=False, ways=True)
    yield Case("reshape-4d", seeded(PoolConv, reshape=True), (x,), opset=13, dynamo=False, trigger=False,
               rewrites="pool-conv3x3")


def variants():
    x = randn(1, C, 7, 7, seed=2)
    yield Case("pool-relu-conv3x3", seeded(PoolConv, relu=True), (x,), opset=13, dynamo=False)
    yield Case("pool-conv5x5", seeded(PoolConv, k=5), (x,), opset=13, dynamo=False)
    # Near miss: a 1x1 convolution after the pool (as in ASPP's image-pooling branch).
    yield Case("pool-conv1x1-near-miss", seeded(PoolConv, k=1), (x,), opset=13, dynamo=False)
