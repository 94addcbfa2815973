from torch import nn
from kb.blocks import randn, seeded
from kb.export import Case


def cases():
    x = randn(1, 16, 24, 24) * 1000  # inputs up to 4184, torch outputs up to 2129: all inside fp16's range
    yield Case("conv3x3", seeded(nn.Conv2d, 16, 16, 3, padding=1), (x,), dynamo=False, ways=True)
    yield Case("conv3x3-small", seeded(nn.Conv2d, 16, 16, 3, padding=1), (randn(1, 16, 24, 24),), dynamo=False)


def variants():  # the same inputs of about 1000; only the kernel, stride, dilation or groups change
    x = randn(1, 16, 24, 24) * 1000
    yield Case("conv5x5", seeded(nn.Conv2d, 16, 16, 5, padding=2), (x,), dynamo=False)
    yield Case("conv7x7", seeded(nn.Conv2d, 16, 16, 7, padding=3), (x,), dynamo=False)
    yield Case("conv3x3-stride2", seeded(nn.Conv2d, 16, 16, 3, stride=2, padding=1), (x,), dynamo=False)
    yield Case("conv3x3-dilated", seeded(nn.Conv2d, 16, 16, 3, padding=2, dilation=2), (x,), dynamo=False)
    yield Case("conv3x3-depthwise", seeded(nn.Conv2d, 16, 16, 3, padding=1, groups=16), (x,), dynamo=False)
    yield Case("conv3x1", seeded(nn.Conv2d, 16, 16, (3, 1), padding=(1, 0)), (x,), dynamo=False)
    yield Case("conv1x1", seeded(nn.Conv2d, 16, 16, 1), (x,), dynamo=False)
