"""ConvNeXt and ConvNeXt-V2 (GRN), SAM's neck, and the other ways of writing a channels-first LayerNorm."""

from __future__ import annotations

from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from .base import Model, _perturb_norms


# --------------------------------------------------------------------------------------------------
# ConvNeXt (facebookresearch/ConvNeXt models/convnext.py) and ConvNeXt-V2 (GRN)
# --------------------------------------------------------------------------------------------------


class ConvNeXtLayerNorm(nn.Module):
    """convnext.py's LayerNorm: channels_last -> F.layer_norm; channels_first -> written by hand with
    (x - u).pow(2).mean(1) (the same code as SAM's / detectron2's LayerNorm2d)."""

    is_norm = True

    def __init__(self, dim, eps=1e-6, data_format="channels_last"):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps, self.data_format, self.shape = eps, data_format, (dim,)

    def forward(self, x):
        if self.data_format == "channels_last":
            return F.layer_norm(x, self.shape, self.weight, self.bias, self.eps)
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class GRN(nn.Module):
    """ConvNeXt-V2 Global Response Normalization (channels last): torch.norm(p=2) over H, W."""

    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(torch.rand(1, 1, 1, dim) * 0.5)
        self.beta = nn.Parameter(torch.rand(1, 1, 1, dim) * 0.5)

    def forward(self, x):
        gx = torch.norm(x, p=2, dim=(1, 2), keepdim=True)
        nx = gx / (gx.mean(dim=-1, keepdim=True) + 1e-6)
        return self.gamma * (x * nx) + self.beta + x


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim, v2=False):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = ConvNeXtLayerNorm(dim, eps=1e-6)  # channels_last
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.grn = GRN(4 * dim) if v2 else None
        self.pwconv2 = nn.Linear(4 * dim, dim)
        # layer_scale_init_value is 1e-6 in the paper; 0.5 here so random blocks count in the output
        self.gamma = None if v2 else nn.Parameter(0.5 * torch.ones(dim))

    def forward(self, x):
        inp = x
        x = self.dwconv(x)
        x = x.permute(0, 2, 3, 1)  # (N, C, H, W) -> (N, H, W, C)
        x = self.act(self.pwconv1(self.norm(x)))
        if self.grn is not None:
            x = self.grn(x)
        x = self.pwconv2(x)
        if self.gamma is not None:
            x = self.gamma * x
        return inp + x.permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    def __init__(self, dims=(16, 32), depths=(1, 1), classes=10, v2=False):
        super().__init__()
        self.downsample_layers = nn.ModuleList([nn.Sequential(
            nn.Conv2d(3, dims[0], 4, 4), ConvNeXtLayerNorm(dims[0], data_format="channels_first"))])
        for i in range(len(dims) - 1):
            self.downsample_layers.append(nn.Sequential(
                ConvNeXtLayerNorm(dims[i], data_format="channels_first"), nn.Conv2d(dims[i], dims[i + 1], 2, 2)))
        self.stages = nn.ModuleList([nn.Sequential(*[ConvNeXtBlock(d, v2) for _ in range(n)])
                                     for d, n in zip(dims, depths)])
        self.norm = nn.LayerNorm(dims[-1], eps=1e-6)
        self.head = nn.Linear(dims[-1], classes)

    def forward(self, x):
        for down, stage in zip(self.downsample_layers, self.stages):
            x = stage(down(x))
        return self.head(self.norm(x.mean([-2, -1])))


def convnext() -> Model:
    return Model(_perturb_norms(ConvNeXt()), (torch.randn(1, 3, 32, 32),), ["input"], ["logits"])


def convnextv2() -> Model:
    return Model(_perturb_norms(ConvNeXt(v2=True)), (torch.randn(1, 3, 32, 32),), ["input"], ["logits"])


class SamNeck(nn.Module):
    """segment-anything ImageEncoderViT.neck: Conv1x1 -> LayerNorm2d -> Conv3x3 -> LayerNorm2d,
    on a (N, C, H, W) feature map; LayerNorm2d is the channels-first LN written by hand."""

    def __init__(self, cin=32, cout=16):
        super().__init__()
        self.neck = nn.Sequential(
            nn.Conv2d(cin, cout, 1, bias=False), ConvNeXtLayerNorm(cout, data_format="channels_first"),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False), ConvNeXtLayerNorm(cout, data_format="channels_first"))

    def forward(self, x):
        return self.neck(x)


def sam_neck() -> Model:
    return Model(_perturb_norms(SamNeck()), (torch.randn(1, 32, 16, 16),), ["features"], ["embeddings"])


class LayerNorm2dWritten(nn.Module):
    """A channels-first LayerNorm written the other ways found in the wild (the variance of x - u):
      square  torch.square(x - u).mean(1)          (e.g. NAFNet-style LayerNorm2d rewrites)
      mul     ((x - u) * (x - u)).mean(1)          (the usual "avoid pow" rewrite)
      var     x.var(1, unbiased=False, keepdim=True)   (mmcv / EfficientFormer-style)"""

    is_norm = True

    def __init__(self, dim, how: str, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.how, self.eps = how, eps

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        if self.how == "square":
            s = torch.square(x - u).mean(1, keepdim=True)
        elif self.how == "mul":
            s = ((x - u) * (x - u)).mean(1, keepdim=True)
        else:
            s = x.var(1, unbiased=False, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


def _neck_ln(how: str) -> Callable[[], Model]:
    """SAM's neck with the LayerNorm2d written `how`."""

    def build() -> Model:
        neck = SamNeck()
        neck.neck[1], neck.neck[3] = LayerNorm2dWritten(16, how), LayerNorm2dWritten(16, how)
        return Model(_perturb_norms(neck), (torch.randn(1, 32, 16, 16),), ["features"], ["embeddings"])
    build.__name__ = f"neck_ln_{how}"
    return build
