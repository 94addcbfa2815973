"""KB007: grid_sample(padding_mode='reflection') with grid points outside [-1, 1], converted to MNN."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case

H, W = 8, 8


class Sample(nn.Module):
    """y = grid_sample(x, grid); the grid is a model input, or computed from one."""

    def __init__(self, padding="reflection", mode="bilinear", align=False, grid="input", act=None, mirrored=False):
        super().__init__()
        self.padding, self.mode, self.align, self.grid, self.act, self.mirrored = padding, mode, align, grid, act, mirrored
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x, g):
        if self.act == "conv-relu":
            x = torch.relu(self.conv(x))
        if self.grid == "offset":  # an identity grid plus learned offsets, as in deformable / flow warping
            g = g * 1.5 + 0.1
        elif self.grid == "tanh":
            g = torch.tanh(g) * 1.4
        if self.mirrored:  # the workaround: reflect the grid into range yourself, then sample with border
            g = mirror(g)
        return F.grid_sample(x, g, mode=self.mode, padding_mode=self.padding, align_corners=self.align)


def mirror(g):
    """Reflect normalized coordinates into [-1, 1], as torch's 'reflection' padding does.

    With align_corners=False as with True, torch reflects about -1 and 1 in normalized units (the
    pixel borders, or the edge pixels' centres), then clips: reflecting, then `border`, is the same.
    """
    t = torch.remainder(g + 1.0, 4.0)
    return 1.0 - torch.abs(t - 2.0)


def inputs(seed=0, scale=1.6):
    torch.manual_seed(seed)
    x = torch.randn(1, 3, H, W)
    g = (torch.rand(1, 6, 7, 2) * 2 - 1) * scale  # points up to 1.6 outside the [-1, 1] square
    return x, g


def case(name, model, opset=16, dynamo=False, scale=1.6, **kw):
    return Case(name, model, inputs(scale=scale), ["x", "grid"], ["y"], opset=opset, dynamo=dynamo, **kw)


def cases():
    torch.manual_seed(0)
    yield case("reflection", Sample())
    yield case("reflection-align-corners", Sample(align=True))
    yield case("border-control", Sample(padding="border"), trigger=False)
    yield case("zeros-control", Sample(padding="zeros"), trigger=False)
    # The workaround, on the same input and grid (the module's conv is unused, so there are no weights to share).
    yield case("mirrored-border", Sample(padding="border", mirrored=True), trigger=False, rewrites="reflection")
    yield case("mirrored-border-align-corners", Sample(padding="border", align=True, mirrored=True), trigger=False,
               rewrites="reflection-align-corners")


def variants():
    torch.manual_seed(0)
    yield case("nearest", Sample(mode="nearest"))
    yield case("conv-relu-before", Sample(act="conv-relu"))
    yield case("offset-grid", Sample(grid="offset"), scale=1.0)
    yield case("tanh-grid", Sample(grid="tanh"), scale=2.0)
    yield case("opset17", Sample(), opset=17)
    yield case("opset20", Sample(), opset=20)
    yield case("onnxsim", Sample(grid="offset"), scale=1.0, simplify=True)
    yield case("dynamo", Sample(), opset=18, dynamo=True)
    yield case("border-near-miss", Sample(padding="border"))
    yield case("zeros-near-miss", Sample(padding="zeros"))
