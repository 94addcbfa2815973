"""KB091: an ONNX MaxPool / AveragePool with no `strides` attribute (ONNX's default: stride 1 on every axis)
kills MNN: SIGFPE for a 1-D or 2-D pool, SIGSEGV for a 3-D one. torch's exporters always write `strides`, so
the checks (test_checks.py) delete it from torch's export, as a graph written by hand or by another tool
leaves it out."""

import torch
from torch import nn

from kb.export import Case


class Net(nn.Module):
    """Conv -> ReLU -> a pool (max or average; 1-D, 2-D or 3-D)."""

    def __init__(self, kind="avg", dim=2, kernel=3, stride=1, padding=1):
        super().__init__()
        conv = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[dim]
        pool = {("avg", 1): nn.AvgPool1d, ("avg", 2): nn.AvgPool2d, ("avg", 3): nn.AvgPool3d,
                ("max", 1): nn.MaxPool1d, ("max", 2): nn.MaxPool2d, ("max", 3): nn.MaxPool3d}[kind, dim]
        self.conv = conv(3, 8, 3, padding=1)
        self.pool = pool(kernel, stride, padding)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


class Adaptive(nn.Module):
    """Conv -> ReLU -> AdaptiveAvgPool2d(4), which torch writes as an AveragePool (kernel and strides 4)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(4)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


def image(seed=1, dim=2):
    torch.manual_seed(seed)
    return torch.randn(*{1: (1, 3, 20), 2: (1, 3, 16, 16), 3: (1, 3, 6, 8, 8)}[dim])


def net(seed=0, cls=Net, **kw):
    torch.manual_seed(seed)
    return cls(**kw)


def cases():
    # torch writes `strides` on every pool: as exported, none of these has the trigger pattern. The checks of
    # test_checks.py delete the attribute and convert the edited file.
    yield Case("avgpool", net(), (image(),), ["x"], ["y"], opset=18, dynamo=True, trigger=False)
    # The workaround's models: the same exports, whose deleted strides the checks write back as all ones.
    yield Case("avgpool-explicit", net(), (image(),), ["x"], ["y"], opset=18, dynamo=True, trigger=False,
               rewrites="avgpool")
    yield Case("maxpool3d-explicit", net(kind="max", dim=3), (image(dim=3),), ["x"], ["y"], opset=18, dynamo=True,
               trigger=False, rewrites="maxpool3d")
    yield Case("maxpool", net(kind="max"), (image(),), ["x"], ["y"], opset=18, dynamo=True, trigger=False)
    yield Case("avgpool1d", net(dim=1), (image(dim=1),), ["x"], ["y"], opset=18, dynamo=True, trigger=False)
    yield Case("maxpool3d", net(kind="max", dim=3), (image(dim=3),), ["x"], ["y"], opset=18, dynamo=True,
               trigger=False)


def variants():
    # Near misses: every torch export of a pool, whatever the exporter, opset or pool, writes `strides`.
    x = image()
    yield Case("avg-k3-s1", net(seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("avg-default-stride", net(seed=3, kernel=2, stride=None, padding=0), (x,), ["x"], ["y"], opset=18,
               dynamo=True)
    yield Case("max-k3-s1", net(seed=3, kind="max"), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("avg-opset13", net(seed=3), (x,), ["x"], ["y"], opset=13, dynamo=False)
    yield Case("avg-torchscript", net(seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("avg-onnxsim", net(seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False, simplify=True)
    yield Case("adaptive-avg", net(seed=3, cls=Adaptive), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("adaptive-avg-torchscript", net(seed=3, cls=Adaptive), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("avg1d", net(seed=3, dim=1), (image(dim=1),), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("max3d", net(seed=3, kind="max", dim=3), (image(dim=3),), ["x"], ["y"], opset=18, dynamo=True)
