"""KB126: pnnx with optlevel=0 still writes the ncnn model, from a graph its later passes never normalised: from
TorchScript a conv followed by a view aborts pnnx ("map::at"), and a multiplication or addition of two tensors is
written through as aten::mul / aten::add (with prim::Constant), which ncnn cannot load."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class VladSoftAssign(nn.Module):
    """NetVLAD's soft assignment (pnnx/pnnx#105's model, cut down): a conv, a 1x1 conv, view, softmax."""

    def __init__(self, how="view"):
        super().__init__()
        self.conv0, self.conv = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 4, 1, bias=False)
        self.how = how

    def forward(self, x):
        y = self.conv(F.normalize(self.conv0(x), p=2, dim=1))
        if self.how == "view":
            y = y.view(x.shape[0], 4, -1)
        elif self.how == "flatten":
            y = y.flatten(2)
        elif self.how == "permute":
            y = y.permute(0, 2, 3, 1)
        elif self.how == "pool-view":
            y = F.avg_pool2d(y, 2).view(1, 4, -1)
        return F.softmax(y, dim=1)


class SqueezeExcite(nn.Module):
    """A conv, then RegNetY's squeeze-and-excitation gate and a residual add (Tencent/ncnn#6063)."""

    def __init__(self, residual=True):
        super().__init__()
        self.conv, self.fc = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 1)
        self.residual = residual

    def forward(self, x):
        y = self.conv(x)
        y2 = y * torch.sigmoid(self.fc(F.adaptive_avg_pool2d(y, 1)))
        return y2 + y if self.residual else y2


def plain():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 4, 1))


IO = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False)


def cases():
    x = randn(1, 3, 16, 16)
    yield Case("vlad-view", seeded(VladSoftAssign), (x,), torchscript=True, **IO)
    yield Case("se-block", seeded(SqueezeExcite), (x,), ["in0"], ["out0"], opset=17, dynamo=False, ways=True)
    # Control: conv, relu, pooling only, which pnnx converts at optlevel=0.
    yield Case("plain", seeded(plain), (x,), trigger=False, torchscript=True, **IO)


def variants():
    x = randn(1, 3, 16, 16)
    yield Case("vlad-flatten", seeded(VladSoftAssign, "flatten"), (x,), torchscript=True, **IO)
    yield Case("vlad-permute", seeded(VladSoftAssign, "permute"), (x,), torchscript=True, **IO)
    yield Case("vlad-pool-view", seeded(VladSoftAssign, "pool-view"), (x,), torchscript=True, **IO)
    yield Case("se-block-torchscript", seeded(SqueezeExcite), (x,), torchscript=True, **IO)
    yield Case("se-gate-only-torchscript", seeded(SqueezeExcite, False), (x,), torchscript=True, **IO)
