"""KB215: pnnx 20261020 leaves a reshape to five axes with a leading 1 (x.view(1, 2, 4, 6, 10), x.unflatten(1, (2, 4)))
unconverted when it does not know the batch axis there (straight off the input, or after an elementwise op): it
prints 'reshape: target exceeds ncnn physical rank' and writes Tensor.reshape / Tensor.unflatten, which ncnn does not
have. Releases 20250912 to 20260526 print 'assume reshape 5-rank tensor has batch_index 0' and write a 4-D Reshape."""

import torch
from torch import nn

from kb.blocks import Fn, randn, seeded
from kb.export import Case

TS = dict(input_names=["in0"], output_names=["out0"], torchscript=True)


class ConvThenUnflatten(nn.Module):
    """A conv, then the same 5-D unflatten: after a conv pnnx knows the batch axis and drops it (four axes left)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 1)

    def forward(self, x):
        return self.conv(x).unflatten(1, (2, 4)) * 2


def cases():
    x = randn(1, 8, 6, 10)
    yield Case("view-5d", Fn(lambda x: x.view(1, 2, 4, 6, 10) * 2), (x,), opset=17, dynamo=False, **TS)
    yield Case("unflatten-5d", Fn(lambda x: x.unflatten(1, (2, 4)) * 2), (x,), opset=17, dynamo=False, **TS)
    # The workaround: the same values with the leading 1 left out (four axes), judged against view-5d.
    yield Case("view-4d", Fn(lambda x: x.view(2, 4, 6, 10) * 2), (x,), opset=17, dynamo=False, trigger=False,
               rewrites="view-5d", **TS)
    yield Case("unflatten-4d", Fn(lambda x: x.view(2, 4, 6, 10) * 2), (x,), opset=17, dynamo=False, trigger=False,
               rewrites="unflatten-5d", **TS)


def variants():
    x, s = randn(1, 8, 6, 10, seed=3), randn(1, 8, 60, seed=4)
    yield Case("reshape-5d-tail", Fn(lambda x: x.reshape(1, 2, 4, 6, 10)), (x,), opset=17, dynamo=False, **TS)
    yield Case("relu-then-view-5d", Fn(lambda x: torch.relu(x).view(1, 2, 4, 6, 10) * 2), (x,), opset=17,
               dynamo=False, **TS)
    yield Case("view-5d-then-sum", Fn(lambda x: (x.view(1, 2, 4, 6, 10) * 2).sum(1)), (x,), opset=17, dynamo=False,
               **TS)
    yield Case("unflatten-module-5d", nn.Unflatten(1, (2, 4)), (x,), opset=17, dynamo=False, **TS)
    yield Case("view-5d-from-3d", Fn(lambda x: x.view(1, 2, 4, 6, 10) + 1), (s,), opset=17, dynamo=False, **TS)
    yield Case("view-5d-onnx", Fn(lambda x: x.view(1, 2, 4, 6, 10) * 2), (x,), opset=17, dynamo=False)
    yield Case("unflatten-5d-onnx-opset13", Fn(lambda x: x.unflatten(1, (2, 4)) * 2), (x,), opset=13, dynamo=False)
    yield Case("view-5d-onnxsim", Fn(lambda x: x.view(1, 2, 4, 6, 10) * 2), (x,), opset=17, dynamo=False,
               simplify=True)
    # near misses: after a conv (pnnx knows the batch axis), and a 4-D view
    yield Case("conv-then-unflatten-near-miss", seeded(ConvThenUnflatten), (x,), opset=17, dynamo=False, **TS)
    yield Case("view-4d-near-miss", Fn(lambda x: x.view(1, 8, 60) * 2), (x,), opset=17, dynamo=False, **TS)
