"""KB068: a MaxPool on values that can be negative, in a model quantized offline by mnnquant (KL).

Each model is converted to a float .mnn with mnnconvert, quantized with mnnquant (int8 weights and
features, KL calibration on 16 samples) and run on x86. The pool then runs in int8, and wherever a
window holds a negative value the pool returns a negative value instead of the window's maximum.
"""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case

C = 16
SHAPE = (1, 3, 32, 32)


def maxpool(t):
    return F.max_pool2d(t, 2)


class Net(nn.Module):
    """conv 3x3 -> `mid` -> conv 1x1: the pool sits between two quantized convolutions, as in a CNN."""

    def __init__(self, mid, bn=False, depthwise=False, head=True):
        super().__init__()
        self.conv = nn.Conv2d(3, C, 3, padding=1)
        self.dw = nn.Conv2d(C, C, 3, padding=1, groups=C) if depthwise else None
        self.bn = nn.BatchNorm2d(C) if bn else None
        self.mid = mid
        self.head = nn.Conv2d(C, C, 1) if head else None

    def forward(self, x):
        y = self.conv(x)
        if self.dw is not None:
            y = self.dw(torch.relu(y))
        if self.bn is not None:
            y = self.bn(y)
        y = self.mid(y)
        return self.head(y) if self.head is not None else y


class Conv1dPool(nn.Module):
    """The same in 1-D (audio, sequences): Conv1d -> MaxPool1d -> Conv1d on the flattened input."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, C, 3, padding=1)
        self.head = nn.Conv1d(C, C, 1)

    def forward(self, x):
        return self.head(F.max_pool1d(self.conv(x.flatten(2)), 2))


class AddPool(nn.Module):
    """Two convolutions added, then pooled: the Add runs in int8 too."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, C, 3, padding=1)
        self.b = nn.Conv2d(3, C, 1)
        self.head = nn.Conv2d(C, C, 1)

    def forward(self, x):
        return self.head(maxpool(self.a(x) + self.b(x)))


class InputPool(nn.Module):
    """The model input pooled first, then a convolution."""

    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(3, C, 1)

    def forward(self, x):
        return self.head(maxpool(x))


def seeded(model):
    """Weights from seed 1 whatever was built before; BatchNorm with trained-looking statistics; eval mode."""
    torch.manual_seed(1)
    for m in model.modules():
        if hasattr(m, "reset_parameters"):
            m.reset_parameters()
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.3, 0.3)
    return model.eval()


def case(name, model, opset=13, dynamo=False, **kw):
    torch.manual_seed(0)
    x = torch.randn(*SHAPE) * 0.5  # the scale of the other calibration samples (sequence_calibration)
    return Case(name, seeded(model), (x,), ["x"], ["y"], opset=opset, dynamo=dynamo, **kw)


def cases():
    # The reported shape: conv, then a 2x2 max pooling, then a 1x1 conv.
    yield case("conv-maxpool", Net(maxpool))
    # The order VGG-style and older models use: pool first, then ReLU.
    yield case("conv-maxpool-relu", Net(lambda t: torch.relu(maxpool(t))))
    # The workaround: ReLU before the pool. max and ReLU commute, so it is the same function.
    yield case("conv-relu-maxpool", Net(lambda t: maxpool(torch.relu(t))), trigger=False,
               rewrites="conv-maxpool-relu")
    # Controls on the same path (mnnquant KL, int8): no pooling, and an average pooling.
    yield case("conv-conv", Net(lambda t: t), trigger=False)
    yield case("conv-avgpool", Net(lambda t: F.avg_pool2d(t, 2)), trigger=False)


def variants():
    yield case("conv-maxpool-opset17", Net(maxpool), opset=17)
    yield case("conv-maxpool-dynamo", Net(maxpool), opset=18, dynamo=True)
    yield case("conv-maxpool-onnxsim", Net(maxpool), opset=17, simplify=True)
    # ResNet's stem without its ReLU: conv, BN (folded into the conv), 3x3 stride-2 pool with padding.
    yield case("conv-bn-stem-pool", Net(lambda t: F.max_pool2d(t, 3, 2, 1), bn=True))
    yield case("conv-maxpool-ceil", Net(lambda t: F.max_pool2d(t, 3, 2, ceil_mode=True)))
    yield case("conv-global-maxpool", Net(lambda t: F.adaptive_max_pool2d(t, 1)))
    yield case("depthwise-maxpool", Net(maxpool, depthwise=True))
    yield case("conv1d-maxpool", Conv1dPool())
    yield case("add-maxpool", AddPool())
    yield case("input-maxpool", InputPool())
    yield case("conv-maxpool-output", Net(maxpool, head=False))
    # near misses: the pool's input is never negative, or there is no max pooling
    yield case("relu-maxpool-dynamo", Net(lambda t: maxpool(torch.relu(t))), opset=18, dynamo=True)
    yield case("relu6-maxpool", Net(lambda t: maxpool(F.relu6(t))))
    yield case("sigmoid-maxpool", Net(lambda t: maxpool(torch.sigmoid(t))))
    yield case("conv-avgpool-dynamo", Net(lambda t: F.avg_pool2d(t, 2)), opset=18, dynamo=True)
