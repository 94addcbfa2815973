"""KB041: mnnquant's EMA feature calibration is far less accurate than KL on ordinary CNNs.

Each model is converted to a float .mnn with mnnconvert, then quantized offline with mnnquant
(int8 weights and features), calibrated on the same four samples with "feature_quantize_method"
"EMA" (the bug) or "KL" (the workaround). The error is the largest difference from the float
model's torch output, as a fraction of that output's largest magnitude.
"""

import torch
from torch import nn

from kb.export import Case

C = 16
SHAPE = (1, 3, 32, 32)


def cbr(cin, cout, k=3, stride=1, groups=1, relu=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, nn.ReLU()) if relu else nn.Sequential(*layers)


def randomize_bn(model):
    """Trained-looking BatchNorm statistics (a fresh BatchNorm is the identity), then eval mode."""
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=g) * 0.5 + 0.5)
            m.weight.data.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(n, generator=g) * 0.1)
    return model.eval()


class Net(nn.Module):
    """One of the small CNN shapes: a bare Conv2d, conv-bn-relu, a MobileNet depthwise-separable block, a
    ResNet basic block (on a stem), or the near-miss shapes."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        if kind == "conv":
            self.body = nn.Conv2d(3, C, 3, padding=1)
        elif kind == "conv-bn-relu":
            self.body = cbr(3, C)
        elif kind == "dw-separable":  # MobileNetV1: stem, then depthwise 3x3 + BN + ReLU, pointwise 1x1 + BN + ReLU
            self.body = nn.Sequential(cbr(3, C), cbr(C, C, groups=C), cbr(C, 2 * C, k=1))
        elif kind == "residual":  # ResNet's BasicBlock on a stem
            self.stem = cbr(3, C)
            self.branch = nn.Sequential(cbr(C, C), cbr(C, C, relu=False))
        elif kind == "linear":  # a Linear layer on a flattened input
            self.body = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, C))
        elif kind == "pool-relu":  # no weights: a ReLU and an average pooling
            self.body = nn.Sequential(nn.ReLU(), nn.AvgPool2d(2))
        elif kind == "conv-relu6":  # a Conv2d whose output is clipped to [0, 6]
            self.body = nn.Sequential(nn.Conv2d(3, C, 3, padding=1), nn.ReLU6())
        else:
            raise ValueError(kind)

    def forward(self, x):
        if self.kind == "residual":
            x = self.stem(x)
            return torch.relu(x + self.branch(x))
        return self.body(x)


def case(name, kind, opset=13, dynamo=False, shape=SHAPE, **kw):
    torch.manual_seed(0)
    model = randomize_bn(Net(kind))  # built after seeding: the same weights whichever cases came before
    x = torch.randn(*shape) * 0.5  # the scale of the other calibration samples (sequence_calibration)
    return Case(name, model, (x,), ["x"], ["y"], opset=opset, dynamo=dynamo, **kw)


def cases():
    # The reported shape: the smallest model that shows it, a single Conv2d.
    yield case("conv", "conv")
    yield case("conv-bn-relu", "conv-bn-relu")
    yield case("dw-separable", "dw-separable")
    yield case("residual", "residual")


def variants():
    yield case("conv-opset17", "conv", 17)
    yield case("conv-dynamo", "conv", 18, True)
    yield case("conv-onnxsim", "conv", 13, simplify=True)
    yield case("conv-bn-relu-dynamo", "conv-bn-relu", 18, True)
    yield case("conv-bn-relu-opset17-onnxsim", "conv-bn-relu", 17, simplify=True)
    yield case("dw-separable-dynamo", "dw-separable", 18, True)
    yield case("residual-opset17", "residual", 17)
    yield case("residual-dynamo", "residual", 18, True)
    yield case("linear", "linear", shape=(1, 3, 8, 8))
    yield case("conv-relu6", "conv-relu6")
    yield case("pool-relu", "pool-relu")  # near miss: nothing with weights
