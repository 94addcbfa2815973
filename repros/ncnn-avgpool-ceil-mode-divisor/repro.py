"""known-bug: ncnn's average pooling with ceil_mode=True and count_include_pad=True divides the last, partial
window by the whole kernel (the ceil_mode extension counted as padding); PyTorch divides by the part of the
window that lies on the input and its declared padding (Tencent/ncnn#924 is the older form of the problem)."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case

C, H = 3, 8  # an 8x8 map: kernel 3, stride 2, padding 1 and ceil_mode leave a last window half past the padding


class PadThenPool(nn.Module):
    """The workaround: the declared zero padding written out, then a pool that counts no padding. The padded
    zeros are real elements now, so they still count; the ceil_mode extension does not, as in torch."""

    def __init__(self, k=3, s=2, p=1):
        super().__init__()
        self.k, self.s, self.p = k, s, p

    def forward(self, x):
        p = self.p
        return F.avg_pool2d(F.pad(x, (p, p, p, p)), self.k, self.s, 0, ceil_mode=True, count_include_pad=False)


class Block(nn.Module):
    """A realistic block: conv, BN, ReLU, then the downsampling average pool."""

    def __init__(self, pool):
        super().__init__()
        torch.manual_seed(0)
        self.conv, self.bn, self.pool = nn.Conv2d(C, C, 3, padding=1), nn.BatchNorm2d(C), pool
        self.bn.eval()

    def forward(self, x):
        return self.pool(torch.relu(self.bn(self.conv(x))))


def avgpool(**kw):
    return nn.AvgPool2d(3, stride=2, padding=1, **kw)


def inputs(seed, h=H):
    torch.manual_seed(seed)
    return torch.randn(1, C, h, h) + 3  # away from zero, so a wrong divisor shows


def cases():
    x = inputs(0)
    io = dict(input_names=["in0"], output_names=["out0"], torchscript=True)
    yield Case("avgpool-ceil", avgpool(ceil_mode=True), (x,), opset=13, dynamo=False, **io)
    yield Case("pad-then-pool", PadThenPool(), (x,), opset=13, dynamo=False, trigger=False, rewrites="avgpool-ceil",
               **io)
    # Controls on the same paths: the same pool without ceil_mode, and with count_include_pad=False.
    yield Case("avgpool-floor", avgpool(), (x,), opset=13, dynamo=False, trigger=False, **io)
    yield Case("avgpool-ceil-exclude-pad", avgpool(ceil_mode=True, count_include_pad=False), (x,), opset=13,
               dynamo=False, trigger=False, **io)


def variants():
    x, x7 = inputs(1), inputs(1, 7)
    io = dict(input_names=["in0"], output_names=["out0"], torchscript=True)
    yield Case("ceil-opset13", avgpool(ceil_mode=True), (x,), opset=13, dynamo=False, **io)
    yield Case("ceil-opset17", avgpool(ceil_mode=True), (x,), opset=17, dynamo=False, **io)
    yield Case("ceil-dynamo", avgpool(ceil_mode=True), (x,), opset=18, dynamo=True,
               export_kwargs={"external_data": False}, **io)
    yield Case("ceil-onnxsim", avgpool(ceil_mode=True), (x,), opset=13, dynamo=False, simplify=True, **io)
    yield Case("ceil-in-block", Block(avgpool(ceil_mode=True)), (x,), opset=13, dynamo=False, **io)
    # kernel 2, stride 2, no padding, on an odd size: the downsampling pool of ResNet-D style shortcuts.
    yield Case("k2-no-pad-odd-size", nn.AvgPool2d(2, 2, ceil_mode=True), (x7,), opset=13, dynamo=False, **io)
    yield Case("exclude-pad-near-miss", avgpool(ceil_mode=True, count_include_pad=False), (x,), opset=13,
               dynamo=False, **io)
    yield Case("floor-near-miss", avgpool(), (x,), opset=13, dynamo=False, **io)
    yield Case("maxpool-near-miss", nn.MaxPool2d(3, 2, 1, ceil_mode=True), (x,), opset=13, dynamo=False, **io)
    yield Case("k2-exclude-pad-near-miss", nn.AvgPool2d(2, 2, ceil_mode=True, count_include_pad=False), (x7,),
               opset=13, dynamo=False, **io)
