"""KB008: grid_sample(mode='bicubic') converted to MNN."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case

H, W = 8, 8


class Sample(nn.Module):
    """y = grid_sample(x, grid); the grid is a model input, or computed from one."""

    def __init__(self, mode="bicubic", padding="zeros", align=False, grid="input", act=None):
        super().__init__()
        self.mode, self.padding, self.align, self.grid, self.act = mode, padding, align, grid, act
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x, g):
        if self.act == "conv-relu":
            x = torch.relu(self.conv(x))
        if self.grid == "tanh":
            g = torch.tanh(g)
        return F.grid_sample(x, g, mode=self.mode, padding_mode=self.padding, align_corners=self.align)


def case(name, model, opset=16, dynamo=False, **kw):
    torch.manual_seed(0)  # the same x and grid in every case, so bicubic and bilinear runs compare
    x = torch.randn(1, 3, H, W)
    g = torch.rand(1, 6, 7, 2) * 1.8 - 0.9  # inside [-1, 1]: padding plays no part
    return Case(name, model, (x, g), ["x", "grid"], ["y"], opset=opset, dynamo=dynamo, **kw)


def cases():
    torch.manual_seed(0)
    yield case("bicubic", Sample())
    yield case("bicubic-align-corners", Sample(align=True))
    # mode='bilinear' on the same input and grid (the module's conv is unused, so no weights to share): the
    # control (judged against its own torch output) and the approximate workaround (against bicubic's).
    yield case("bilinear-control", Sample(mode="bilinear"), trigger=False, rewrites="bicubic")


def variants():
    torch.manual_seed(0)
    yield case("border", Sample(padding="border"))
    yield case("reflection", Sample(padding="reflection"))
    yield case("conv-relu-before", Sample(act="conv-relu"))
    yield case("tanh-grid", Sample(grid="tanh"))
    yield case("opset17", Sample(), opset=17)
    yield case("opset20", Sample(), opset=20)
    yield case("onnxsim", Sample(grid="tanh"), simplify=True)
    yield case("dynamo", Sample(), opset=18, dynamo=True)
    yield case("bilinear-near-miss", Sample(mode="bilinear"))
    yield case("nearest-near-miss", Sample(mode="nearest"))
