"""Deconvolution decoders (CenterNet / SimpleBaseline heads, DCGAN-style generators)."""

from __future__ import annotations

import torch
from torch import nn

from .base import Model, _perturb_norms


# --------------------------------------------------------------------------------------------------
# Deconvolution decoders (CenterNet / SimpleBaseline heads, DCGAN-style generators)
# --------------------------------------------------------------------------------------------------


class Scale(nn.Module):
    """A per-channel affine after a deconvolution: y * s + b, or s * y + b ("left")."""

    def __init__(self, c, left=False):
        super().__init__()
        self.left = left
        self.s = nn.Parameter(torch.rand(1, c, 1, 1) + 0.5)
        self.b = nn.Parameter(torch.rand(1, c, 1, 1) - 0.5)

    def forward(self, y):
        return self.s * y + self.b if self.left else y * self.s + self.b


class DeconvDecoder(nn.Module):
    """Upsampling head: grouped ConvTranspose + BN + ReLU, depthwise ConvTranspose + BN + ReLU, then a
    grouped ConvTranspose with a Scale (in the operand order `left` picks), and a 1x1 conv."""

    def __init__(self, left=False, c=32):
        super().__init__()
        self.up1 = nn.Sequential(nn.ConvTranspose2d(c, c, 4, 2, 1, groups=4, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        self.up2 = nn.Sequential(nn.ConvTranspose2d(c, c, 4, 2, 1, groups=c, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        self.up3 = nn.ConvTranspose2d(c, c, 4, 2, 1, groups=2)
        self.scale = Scale(c, left)
        self.head = nn.Conv2d(c, 8, 1)

    def forward(self, x):
        x = self.up2(self.up1(x))
        return self.head(torch.relu(self.scale(self.up3(x))))


def deconv_decoder() -> Model:
    return Model(_perturb_norms(DeconvDecoder()), (torch.randn(1, 32, 4, 4),), ["features"], ["heatmap"])


def deconv_decoder_scale_left() -> Model:
    return Model(_perturb_norms(DeconvDecoder(left=True)), (torch.randn(1, 32, 4, 4),), ["features"], ["heatmap"])
