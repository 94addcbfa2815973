"""KB087: mnnconvert drops the `dilations` of an ONNX MaxPool (nn.MaxPool2d(..., dilation=2)): MNN pools
an undilated window, so the output has another shape than torch's (and other values)."""

import torch
from torch import nn

from kb.blocks import like, seeded
from kb.export import Case


class Net(nn.Module):
    """Conv -> ReLU -> a dilated max pool (1-D, 2-D or 3-D)."""

    def __init__(self, kernel=3, stride=1, padding=0, dilation=2, ceil_mode=False, dim=2):
        super().__init__()
        conv = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[dim]
        pool = {1: nn.MaxPool1d, 2: nn.MaxPool2d, 3: nn.MaxPool3d}[dim]
        self.conv = conv(3, 8, 3, padding=1)
        self.pool = pool(kernel, stride, padding, dilation=dilation, ceil_mode=ceil_mode)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


class Slices(Net):
    """The workaround: the same dilated 3x3 max pool (stride 1, no padding) as the maximum of nine strided
    slices of the input, one per tap of the window. Slice and Max only; no MaxPool node."""

    def forward(self, x):
        y = torch.relu(self.conv(x))
        k, d = 3, 2
        h, w = y.shape[2] - d * (k - 1), y.shape[3] - d * (k - 1)
        out = None
        for i in range(k):
            for j in range(k):
                tap = y[:, :, i * d:i * d + h, j * d:j * d + w]
                out = tap if out is None else torch.maximum(out, tap)
        return out


def image(seed=1, dim=2):
    torch.manual_seed(seed)
    return torch.randn(*{1: (1, 3, 20), 2: (1, 3, 16, 16), 3: (1, 3, 8, 10, 10)}[dim])


def cases():
    x = image()
    model = seeded(Net)
    yield Case("maxpool-dilated", model, (x,), ["x"], ["y"], opset=18, dynamo=True)
    slices = like(model, Slices)
    yield Case("maxpool-slices", slices, (x,), ["x"], ["y"], opset=18, dynamo=True, trigger=False,
               rewrites="maxpool-dilated")
    # Control: the same pool without dilation.
    yield Case("maxpool-undilated", seeded(Net, dilation=1), (x,), ["x"], ["y"], opset=18, dynamo=True, trigger=False)


def variants():
    x = image()
    yield Case("k3-d2", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("k2-d2", seeded(Net, seed=3, kernel=2), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("k3-d3-s2", seeded(Net, seed=3, stride=2, dilation=3), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("padded", seeded(Net, seed=3, padding=1), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("ceil-mode", seeded(Net, seed=3, stride=2, padding=1, ceil_mode=True), (x,), ["x"], ["y"], opset=18,
               dynamo=True)
    yield Case("width-only", seeded(Net, seed=3, padding=1, dilation=(1, 2)), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("opset17", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=True)
    yield Case("opset20", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=20, dynamo=True)
    yield Case("torchscript", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("onnxsim", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False, simplify=True)
    yield Case("pool1d", seeded(Net, seed=3, dim=1), (image(dim=1),), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("pool3d", seeded(Net, seed=3, dim=3), (image(dim=3),), ["x"], ["y"], opset=18, dynamo=True)
    # Near misses: no dilation, with and without ceil_mode.
    yield Case("undilated-near-miss", seeded(Net, seed=3, dilation=1), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("undilated-ceil-near-miss", seeded(Net, seed=3, stride=2, padding=1, dilation=1, ceil_mode=True), (x,),
               ["x"], ["y"], opset=18, dynamo=True)
