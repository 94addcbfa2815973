"""known-bug: torch.roll over three dims (Video Swin's 3-D shifted windows, dims=(1, 2, 3) of (B, D, H, W, C)),
converted by pnnx from TorchScript: pnnx prints "ignore torch.roll torch.roll_0 param dims=(1,2,3)", writes the op
through as torch.roll, and ncnn stops with "layer torch.roll not exists or registered". A roll over one or two
dims converts (a Slice and Concat per dim)."""

import torch
from torch import nn

from kb.blocks import seeded
from kb.export import Case


class ShiftWindows3d(nn.Module):
    """Video Swin's cyclic shift: a Conv3d patch embedding, channels last (B, D, H, W, C), torch.roll over D, H and
    W, a Linear, channels first again.

    how="roll": one torch.roll over three dims (the bug); how="chained": a roll over D, then one over H and W (the
    workaround, the same result); back=True: roll back after the Linear (a whole shifted-window block).
    """

    def __init__(self, shifts=(-1, -2, -2), how="roll", back=False):
        super().__init__()
        self.embed = nn.Conv3d(3, 8, 2, stride=2)
        self.proj = nn.Linear(8, 8)
        self.shifts, self.how, self.back = shifts, how, back

    def roll(self, y, shifts):
        if self.how == "chained":
            return torch.roll(torch.roll(y, shifts[0], 1), shifts[1:], (2, 3))
        return torch.roll(y, shifts, (1, 2, 3))

    def forward(self, x):
        y = self.proj(self.roll(self.embed(x).permute(0, 2, 3, 4, 1), self.shifts))
        if self.back:
            y = self.roll(y, tuple(-s for s in self.shifts))
        return y.permute(0, 4, 1, 2, 3)


class ShiftWindows2d(nn.Module):
    """Swin's 2-D cyclic shift: a Conv2d patch embedding, channels last (B, H, W, C), torch.roll over H and W.

    back=True: roll back over the same dims after the Linear, as SCUNet's shifted-window block (WMSA) does
    (Tencent/ncnn#5574).
    """

    def __init__(self, dims=(1, 2), back=False):
        super().__init__()
        self.embed = nn.Conv2d(3, 8, 2, stride=2)
        self.proj = nn.Linear(8, 8)
        self.dims, self.back = dims, back

    def forward(self, x):
        y = self.embed(x).permute(0, 2, 3, 1)
        shifts = (-2, -2, -1)[:len(self.dims)]
        y = self.proj(torch.roll(y, shifts, self.dims))
        if self.back:
            y = torch.roll(y, tuple(-s for s in shifts), self.dims)
        return y.permute(0, 3, 1, 2)


class RollTokens(nn.Module):
    """A Linear over a token sequence (B, L, C), torch.roll over L only (one dim), another Linear."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(8, 8), nn.Linear(8, 8)

    def forward(self, x):
        return self.fc2(torch.roll(self.fc1(x), 3, 1))


class RollConv(nn.Module):
    """torch.roll of a conv's output (2-D or 3-D conv) over the given dims."""

    def __init__(self, conv, shifts, dims):
        super().__init__()
        self.conv = conv
        self.shifts, self.dims = shifts, dims

    def forward(self, x):
        return torch.roll(self.conv(x), self.shifts, self.dims)


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, 3, 8, 16, 16)
    x2d = torch.randn(1, 3, 16, 16)
    io = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("roll-3d", seeded(lambda: ShiftWindows3d()), (x,), **io)
    # The workaround: the same weights, the roll split into one over D and one over H and W. Its ONNX export is the
    # same chain of Slice and Concat as the original's, so it is no control for the trigger pattern.
    yield Case("roll-chained", seeded(lambda: ShiftWindows3d(how="chained")), (x,), rewrites="roll-3d", **io)
    # Control: Swin's 2-D shift (a roll over H and W), which pnnx converts.
    yield Case("roll-2d", seeded(lambda: ShiftWindows2d()), (x2d,), trigger=False, **io)


def variant(name, module, x, **kw):
    return Case(name, module, (x,), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True, **kw)


def variants():
    torch.manual_seed(1)
    x = torch.randn(1, 3, 8, 16, 16)
    x2d = torch.randn(1, 3, 16, 16)
    x3d = torch.randn(1, 3, 4, 8, 8)
    yield variant("swin3d-shift", seeded(lambda: ShiftWindows3d()), x)
    yield variant("swin3d-reverse-shift", seeded(lambda: ShiftWindows3d(shifts=(1, 2, 2))), x)
    yield variant("swin3d-shift-and-back", seeded(lambda: ShiftWindows3d(back=True)), x)
    yield variant("swin3d-odd-shift", seeded(lambda: ShiftWindows3d(shifts=(-3, -5, -7))), x)
    yield variant("swin2d-channels-too", seeded(lambda: ShiftWindows2d(dims=(1, 2, 3))), x2d)
    yield variant("featuremap-chw", seeded(lambda: RollConv(nn.Conv2d(3, 8, 3, padding=1), (1, 2, 3), (1, 2, 3))), x2d)
    yield variant("featuremap-negative-dims",
                  seeded(lambda: RollConv(nn.Conv2d(3, 8, 3, padding=1), (-1, -2, -3), (-3, -2, -1))), x2d)
    yield variant("conv3d-dhw", seeded(lambda: RollConv(nn.Conv3d(3, 4, 3, padding=1), (1, 2, 3), (2, 3, 4))), x3d)
    yield variant("conv3d-four-dims",
                  seeded(lambda: RollConv(nn.Conv3d(3, 4, 3, padding=1), (1, 1, 2, 3), (1, 2, 3, 4))), x3d)
    # Near misses: a roll over two dims (Swin's 2-D shift) and over one, which pnnx converts.
    yield variant("swin2d-near-miss", seeded(lambda: ShiftWindows2d()), x2d)
    yield variant("featuremap-one-dim-near-miss",
                  seeded(lambda: RollConv(nn.Conv2d(3, 8, 3, padding=1), 2, 3)), x2d)
    yield variant("conv3d-two-dims-near-miss",
                  seeded(lambda: RollConv(nn.Conv3d(3, 4, 3, padding=1), (1, 2), (3, 4))), x3d)
    # Tencent/ncnn#5574 (SCUNet, pnnx 20240603): rolls over one or two dims, left unconverted until PR #5623.
    yield variant("scunet-shift-and-back-near-miss", seeded(lambda: ShiftWindows2d(back=True)), x2d)
    yield variant("featuremap-hw-near-miss",
                  seeded(lambda: RollConv(nn.Conv2d(3, 8, 3, padding=1), (-4, -4), (2, 3))), x2d)
    yield variant("tokens-one-dim-near-miss", seeded(RollTokens), torch.randn(1, 12, 8))
