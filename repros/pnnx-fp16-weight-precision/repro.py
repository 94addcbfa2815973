"""KB145: pnnx stores the ncnn weights as fp16 by default (fp16=1); a conv fed raw pixels (0-255) whose
BatchNorm subtracts a large mean loses the weights' low bits, and ncnn's output is off; fp16=0 keeps them."""

import torch
from torch import nn

from kb.blocks import seeded
from kb.export import Case


def raw_pixel_stem():
    """Conv on raw 0-255 pixels, then a BatchNorm whose running mean (about 100 per channel) cancels most of it."""
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
    with torch.no_grad():
        m[1].running_mean.copy_(torch.full((8,), 128.0) * m[0].weight.sum((1, 2, 3)) + m[0].bias)
        m[1].running_var.fill_(0.5)
    return m.eval()


def cases():
    torch.manual_seed(1)
    x = 128 + 20 * torch.randn(1, 3, 16, 16)
    yield Case("raw-pixel-stem", seeded(raw_pixel_stem), (x,), dynamo=False, ways=True)


def normalized_stem():
    """The same stem fed inputs already normalized to about N(0, 1): a BatchNorm with mean 0 (a near miss)."""
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()).eval()


def variants():
    torch.manual_seed(1)
    x = torch.randn(1, 3, 16, 16)
    yield Case("normalized-stem-near-miss", seeded(normalized_stem), (x,), dynamo=False)
    yield Case("conv-near-miss", seeded(nn.Conv2d, 3, 8, 3), (x,), dynamo=False)
    yield Case("conv64-near-miss", seeded(lambda: nn.Sequential(nn.Conv2d(3, 64, 3), nn.ReLU(), nn.Conv2d(64, 64, 3))), (x,), dynamo=False)
