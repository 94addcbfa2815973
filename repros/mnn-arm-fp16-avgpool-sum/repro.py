"""KB162: with precision low on an ARMv8.2 CPU, MNN's average pooling adds up its window in fp16. Over a large
window (a global average over a 128x128 map) the running sum stops growing once the next value is under half of
fp16's spacing there, so the mean comes out far too small, although every tensor of the model is in fp16's range.
ReduceMean over the same values is right; precision normal, an ARMv8.0 CPU and x86 are right."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import Fn, seeded
from kb.export import Case


def uniform(shape, lo, hi, seed=1):
    """Values in [lo, hi): a feature map of positive activations (as after a ReLU), seeded."""
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(*shape, generator=g) * (hi - lo) + lo,)


# A 128x128 map of values in [0, 2): the mean is about 1, the sum over one channel about 16384.
MAP = uniform((1, 4, 128, 128), 0.0, 2.0)


class SE(nn.Module):
    """MobileNetV3's squeeze-and-excitation block: the global average scales each channel of the map."""

    def __init__(self, c=4, r=2):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(c, c * r, 1)
        self.fc2 = nn.Conv2d(c * r, c, 1)

    def forward(self, x):
        s = F.hardsigmoid(self.fc2(F.relu(self.fc1(self.pool(x)))))
        return x * s


class Head(nn.Module):
    """A classifier head: conv, ReLU, global average pooling, Linear."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 3, padding=1)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(F.relu(self.conv(x)), 1).flatten(1))


def cases():
    yield Case("global-avgpool", nn.AdaptiveAvgPool2d(1), MAP, opset=17, dynamo=False)
    # The workaround: the same mean as a ReduceMean, judged against global-avgpool's torch output.
    yield Case("reduce-mean", Fn(lambda x: x.mean((2, 3), keepdim=True)), MAP, opset=17, dynamo=False,
               trigger=False, rewrites="global-avgpool")


def variants():
    # All converted on x86 and run with the Module API on an emulated cortex-a76, precision low.
    yield Case("global-avgpool", nn.AdaptiveAvgPool2d(1), MAP, opset=17, dynamo=False)
    yield Case("global-avgpool-opset11", nn.AdaptiveAvgPool2d(1), MAP, opset=11, dynamo=False)
    yield Case("global-avgpool-onnxsim", nn.AdaptiveAvgPool2d(1), MAP, opset=17, dynamo=False, simplify=True)
    # AveragePool with a 64x64 window (adaptive pooling to 2x2), over values in [10, 30): sums of about 82000.
    yield Case("adaptive-avgpool-2x2", nn.AdaptiveAvgPool2d(2), uniform((1, 4, 128, 128), 10.0, 30.0),
               opset=17, dynamo=False)
    yield Case("avgpool-k64", nn.AvgPool2d(64), uniform((1, 4, 128, 128), 10.0, 30.0), opset=17, dynamo=False)
    yield Case("se-block", seeded(SE), MAP, opset=17, dynamo=False)
    yield Case("classifier-head", seeded(Head), MAP, opset=17, dynamo=False)
    # Near misses: a small map, a small window, and the same mean as a ReduceMean.
    yield Case("global-avgpool-16x16", nn.AdaptiveAvgPool2d(1), uniform((1, 4, 16, 16), 0.0, 2.0), opset=17,
               dynamo=False)
    yield Case("avgpool-3x3", nn.AvgPool2d(3, 1, 1), MAP, opset=17, dynamo=False)
    yield Case("reduce-mean", Fn(lambda x: x.mean((2, 3), keepdim=True)), MAP, opset=17, dynamo=False)
