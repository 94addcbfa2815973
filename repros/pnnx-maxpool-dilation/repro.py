"""KB202: a max pool with dilation > 1 (nn.MaxPool2d(3, 1, 1, dilation=2), F.max_pool1d(..., dilation=2)) through
pnnx. ncnn's Pooling layers have no dilation, and pnnx's ncnn passes map a max pool to them only when dilation is 1;
otherwise pnnx prints "ignore F.max_pool2d ... param dilation=(2,2)" and writes the op through, and ncnn stops at
"layer F.max_pool2d not exists or registered" (from TorchScript, and from the ONNX MaxPool with dilations)."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import Fn, randn, seeded
from kb.export import Case

NEG = -1e4  # the padding value of the rewrites: below any activation here, as a max pool's implicit -inf padding


def shifted_max(x, k=3, d=2, p=1):
    """max_pool2d(x, k, stride=1, padding=p, dilation=d) as the max of the k * k shifted windows of the padded map:
    a Padding, Crops and BinaryOp max in ncnn."""
    xp = F.pad(x, (p, p, p, p), value=NEG)
    h, w = x.shape[2] + 2 * p - d * (k - 1), x.shape[3] + 2 * p - d * (k - 1)
    y = None
    for a in range(k):
        for b in range(k):
            s = xp[:, :, a * d:a * d + h, b * d:b * d + w]
            y = s if y is None else torch.maximum(y, s)
    return y


def unfold_max(x, k=3, d=2, p=1, s=1):
    """The same pool as F.unfold (ncnn's Unfold has dilation and stride) then the max over the window axis."""
    n, c, h, w = x.shape
    ho, wo = (h + 2 * p - d * (k - 1) - 1) // s + 1, (w + 2 * p - d * (k - 1) - 1) // s + 1
    u = F.unfold(F.pad(x, (p, p, p, p), value=NEG), k, dilation=d, stride=s)
    return u.view(n, c, k * k, ho * wo).amax(2).view(n, c, ho, wo)


class ConvPool(nn.Module):
    """A conv, then a max pool module (pnnx keeps a module inside a model as nn.MaxPool2d)."""

    def __init__(self, pool):
        super().__init__()
        self.conv, self.pool = nn.Conv2d(8, 8, 3, padding=1), pool

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


IO = dict(input_names=["in0"], output_names=["out0"], torchscript=True)


def cases():
    x = randn(1, 8, 12, 14)
    yield Case("maxpool-dilation2", Fn(lambda x: F.max_pool2d(x, 3, 1, 1, dilation=2)), (x,), opset=17,
               dynamo=False, ways=True, **IO)
    # Workarounds: the same pool written with ops ncnn has, judged against maxpool-dilation2's torch output.
    yield Case("shifted-max", Fn(shifted_max), (x,), opset=17, dynamo=False, trigger=False,
               rewrites="maxpool-dilation2", **IO)
    yield Case("unfold-max", Fn(unfold_max), (x,), opset=17, dynamo=False, trigger=False,
               rewrites="maxpool-dilation2", **IO)
    # Control: the same pool without dilation, an ncnn Pooling.
    yield Case("maxpool-dilation1", Fn(lambda x: F.max_pool2d(x, 3, 1, 1)), (x,), opset=17, dynamo=False,
               trigger=False, **IO)


def variants():
    x, seq = randn(1, 8, 12, 14, seed=2), randn(1, 8, 20, seed=3)
    yield Case("stride2", Fn(lambda x: F.max_pool2d(x, 3, 2, 1, dilation=2)), (x,), opset=17, dynamo=False, **IO)
    yield Case("dilation-2x1", Fn(lambda x: F.max_pool2d(x, 3, 1, 1, dilation=(2, 1))), (x,), opset=17,
               dynamo=False, **IO)
    yield Case("ceil-mode", Fn(lambda x: F.max_pool2d(x, 3, 2, 0, dilation=2, ceil_mode=True)), (x,), opset=17,
               dynamo=False, **IO)
    yield Case("conv-module", seeded(ConvPool, nn.MaxPool2d(3, 1, 1, dilation=3)), (x,), opset=17, dynamo=False,
               **IO)
    yield Case("maxpool1d", Fn(lambda x: F.max_pool1d(x, 3, 1, 1, dilation=2)), (seq,), opset=17, dynamo=False,
               **IO)
    yield Case("maxpool1d-module", seeded(nn.MaxPool1d, 2, 1, 0, dilation=4), (seq,), opset=17, dynamo=False, **IO)
    # near misses: dilation 1, an average pool (no dilation), a dilated conv
    yield Case("dilation1-near-miss", Fn(lambda x: F.max_pool2d(x, 3, 2, 1, dilation=1)), (x,), opset=17,
               dynamo=False, **IO)
    yield Case("conv-module-dilation1-near-miss", seeded(ConvPool, nn.MaxPool2d(3, 1, 1)), (x,), opset=17,
               dynamo=False, **IO)
    yield Case("avgpool-near-miss", Fn(lambda x: F.avg_pool2d(x, 3, 1, 1)), (x,), opset=17, dynamo=False, **IO)
    yield Case("dilated-conv-near-miss", seeded(nn.Conv2d, 8, 8, 3, padding=2, dilation=2), (x,), opset=17,
               dynamo=False, **IO)
