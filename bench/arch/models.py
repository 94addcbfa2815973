"""Small hand-written models that keep the op structure of real architecture families.

timm and torchvision cannot be imported here, so each family is written out: random weights, small
widths, but the same layers, in the same order, written the same way as the reference code (the
docstrings name it). Each builder returns a `Model`: the module, example inputs, their names and the
output names. `FAMILIES` lists them; `kind` tells the exporter which extra variants apply
("cnn": onnxruntime quantization; "rnn": MNN offline quantization, as for "cnn").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class Model:
    module: nn.Module
    inputs: tuple
    input_names: list[str]
    output_names: list[str]
    export_kwargs: dict = field(default_factory=dict)  # for torch.onnx.export(dynamo=False)


def _perturb_norms(module: nn.Module) -> nn.Module:
    """Non-trivial affine parameters and statistics in every norm layer, so a wrongly folded or
    wrongly broadcast norm shows in the outputs (fresh layers are weight 1, bias 0, mean 0, var 1)."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.GroupNorm, nn.LayerNorm)) or hasattr(m, "is_norm"):
                if getattr(m, "weight", None) is not None:
                    m.weight.uniform_(0.5, 1.5)
                if getattr(m, "bias", None) is not None:
                    m.bias.uniform_(-0.5, 0.5)
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    return module.eval()


# --------------------------------------------------------------------------------------------------
# ResNet (torchvision resnet.BasicBlock), with and without in-model input normalization
# --------------------------------------------------------------------------------------------------


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class ResNet(nn.Module):
    """torchvision ResNet-18 layout (stem conv7/2 + BN + ReLU + maxpool, BasicBlocks, avgpool, fc),
    two stages of two blocks. `normalize`: the ImageNet mean/std applied inside the model, as many
    exported apps do, so the first op on the input is a Sub, not the Conv."""

    def __init__(self, widths=(16, 32), classes: int = 10, normalize: bool = False):
        super().__init__()
        self.normalize = normalize
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))
        self.conv1 = nn.Conv2d(3, widths[0], 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        layers, cin = [], widths[0]
        for i, w in enumerate(widths):
            layers.append(nn.Sequential(BasicBlock(cin, w, 1 if i == 0 else 2), BasicBlock(w, w)))
            cin = w
        self.layers = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        if self.normalize:
            x = (x - self.mean) / self.std
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layers(x)
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet() -> Model:
    return Model(_perturb_norms(ResNet()), (torch.randn(1, 3, 64, 64),), ["input"], ["logits"])


def resnet_preproc() -> Model:
    return Model(_perturb_norms(ResNet(normalize=True)), (torch.rand(1, 3, 64, 64),), ["image"], ["logits"])


# --------------------------------------------------------------------------------------------------
# MobileNetV2 (torchvision mobilenetv2.InvertedResidual): depthwise conv, ReLU6 (Clip)
# --------------------------------------------------------------------------------------------------


def _conv_bn_relu6(cin, cout, k=3, s=1, groups=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, (k - 1) // 2, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU6(inplace=True))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        layers = [] if expand == 1 else [_conv_bn_relu6(cin, hidden, 1)]
        layers += [_conv_bn_relu6(hidden, hidden, 3, stride, groups=hidden),
                   nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 2, 2)]  # t, c, n, s
        layers, cin = [_conv_bn_relu6(3, 16, 3, 2)], 16
        for t, c, n, s in cfg:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers.append(_conv_bn_relu6(cin, 64, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(64, classes))

    def forward(self, x):
        x = self.features(x)
        x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
        return self.classifier(torch.flatten(x, 1))


def mobilenetv2() -> Model:
    return Model(_perturb_norms(MobileNetV2()), (torch.randn(1, 3, 64, 64),), ["input"], ["logits"])


# --------------------------------------------------------------------------------------------------
# YOLO-style detector neck (YOLOv5/v8: Conv+BN+SiLU, C3/C2f-ish bottlenecks, nearest upsample, concat)
# --------------------------------------------------------------------------------------------------


class ConvBnSiLU(nn.Module):
    def __init__(self, cin, cout, k=1, s=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class C3(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        h = cout // 2
        self.cv1, self.cv2, self.cv3 = ConvBnSiLU(cin, h), ConvBnSiLU(cin, h), ConvBnSiLU(2 * h, cout)
        self.m = nn.Sequential(ConvBnSiLU(h, h, 1), ConvBnSiLU(h, h, 3))

    def forward(self, x):
        a = self.cv1(x)
        return self.cv3(torch.cat([a + self.m(a), self.cv2(x)], 1))


class YoloSmall(nn.Module):
    """Backbone to stride 8 and 16, an FPN step (Upsample x2 + Concat) and two 1x1 detect heads."""

    def __init__(self, outs=3 * 9):
        super().__init__()
        self.stem = ConvBnSiLU(3, 16, 3, 2)
        self.b1 = nn.Sequential(ConvBnSiLU(16, 32, 3, 2), C3(32, 32))
        self.b2 = nn.Sequential(ConvBnSiLU(32, 64, 3, 2), C3(64, 64))
        self.b3 = nn.Sequential(ConvBnSiLU(64, 64, 3, 2), C3(64, 64))
        self.lat = ConvBnSiLU(64, 32)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.fuse = C3(64 + 32, 64)
        self.head_p3 = nn.Conv2d(64, outs, 1)
        self.head_p4 = nn.Conv2d(64, outs, 1)

    def forward(self, x):
        p3 = self.b2(self.b1(self.stem(x)))
        p4 = self.b3(p3)
        f = self.fuse(torch.cat([self.up(self.lat(p4)), p3], 1))
        return self.head_p3(f), self.head_p4(p4)


def yolo() -> Model:
    return Model(_perturb_norms(YoloSmall()), (torch.randn(1, 3, 64, 64),), ["images"], ["p3", "p4"])


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


class T5Block(nn.Module):
    """transformers T5LayerFF: RMSNorm (hidden.pow(2).mean(-1), no mean subtracted) -> DenseReluDense,
    residual; twice, then the final RMSNorm. No attention, so nothing else in the model can fail."""

    def __init__(self, dim=64):
        super().__init__()
        self.norms = nn.ModuleList([RMSNorm(dim) for _ in range(3)])
        self.wi = nn.ModuleList([nn.Linear(dim, 2 * dim, bias=False) for _ in range(2)])
        self.wo = nn.ModuleList([nn.Linear(2 * dim, dim, bias=False) for _ in range(2)])

    def forward(self, h):
        for norm, wi, wo in zip(self.norms, self.wi, self.wo):
            h = h + wo(torch.relu(wi(norm(h))))
        return self.norms[2](h)


def t5_rmsnorm_ff() -> Model:
    return Model(_perturb_norms(T5Block()), (torch.randn(1, 16, 64),), ["hidden_states"], ["output"])


# --------------------------------------------------------------------------------------------------
# Vision Transformer (timm vision_transformer.py: PatchEmbed, pre-norm Block, fused attention)
# --------------------------------------------------------------------------------------------------


class Attention(nn.Module):
    def __init__(self, dim, heads, fused=True):
        super().__init__()
        self.heads, self.hd, self.fused = heads, dim // heads, fused
        self.scale = self.hd ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, bias=None):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        if self.fused and bias is None:
            x = F.scaled_dot_product_attention(q, k, v)
        else:
            attn = (q * self.scale) @ k.transpose(-2, -1)
            if bias is not None:
                attn = attn + bias
            x = attn.softmax(dim=-1) @ v
        return self.proj(x.transpose(1, 2).reshape(B, N, C))


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class ViTBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim, eps=1e-6), Attention(dim, heads)
        self.norm2, self.mlp = nn.LayerNorm(dim, eps=1e-6), Mlp(dim, 4 * dim)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    def __init__(self, img=32, patch=4, dim=32, depth=2, heads=4, classes=10):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, patch)
        n = (img // patch) ** 2
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*[ViTBlock(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)  # (B, N, C)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


def vit() -> Model:
    return Model(_perturb_norms(ViT()), (torch.randn(1, 3, 32, 32),), ["pixel_values"], ["logits"])


# --------------------------------------------------------------------------------------------------
# Swin Transformer (microsoft/Swin-Transformer models/swin_transformer.py)
# --------------------------------------------------------------------------------------------------


def window_partition(x, ws: int):
    B, H, W, C = x.shape
    x = x.view(B, H // ws, ws, W // ws, ws, C)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws, ws, C)


def window_reverse(windows, ws: int, H: int, W: int):
    B = int(windows.shape[0] / (H * W / ws / ws))
    x = windows.view(B, H // ws, W // ws, ws, ws, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, -1)


class WindowAttention(nn.Module):
    def __init__(self, dim, ws, heads):
        super().__init__()
        self.ws, self.heads = ws, heads
        self.table = nn.Parameter(torch.randn((2 * ws - 1) ** 2, heads) * 0.02)
        coords = torch.stack(torch.meshgrid(torch.arange(ws), torch.arange(ws), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (ws - 1)
        self.register_buffer("index", rel[:, :, 0] * (2 * ws - 1) + rel[:, :, 1], persistent=False)
        self.attn = Attention(dim, heads, fused=False)

    def forward(self, x, mask=None):
        n = self.ws * self.ws
        bias = self.table[self.index.view(-1)].view(n, n, -1).permute(2, 0, 1).unsqueeze(0)
        if mask is not None:  # (nW, n, n): windows of one image, as Swin adds it per window
            nw = mask.shape[0]
            bias = bias + mask.unsqueeze(1).repeat(x.shape[0] // nw, 1, 1, 1)
        return self.attn(x, bias)


class SwinBlock(nn.Module):
    def __init__(self, dim, res, heads, ws, shift):
        super().__init__()
        self.res, self.ws, self.shift = res, ws, shift
        self.norm1, self.attn = nn.LayerNorm(dim), WindowAttention(dim, ws, heads)
        self.norm2, self.mlp = nn.LayerNorm(dim), Mlp(dim, 4 * dim)
        mask = None
        if shift:
            img = torch.zeros(1, res, res, 1)
            cnt = 0
            for h in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
                for w in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
                    img[:, h, w, :] = cnt
                    cnt += 1
            mw = window_partition(img, ws).view(-1, ws * ws)
            mask = mw.unsqueeze(1) - mw.unsqueeze(2)
            mask = mask.masked_fill(mask != 0, -100.0).masked_fill(mask == 0, 0.0)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x):
        H = W = self.res
        B, L, C = x.shape
        shortcut = x
        x = self.norm1(x).view(B, H, W, C)
        if self.shift:
            x = torch.roll(x, shifts=(-self.shift, -self.shift), dims=(1, 2))
        win = window_partition(x, self.ws).view(-1, self.ws * self.ws, C)
        win = self.attn(win, self.mask).view(-1, self.ws, self.ws, C)
        x = window_reverse(win, self.ws, H, W)
        if self.shift:
            x = torch.roll(x, shifts=(self.shift, self.shift), dims=(1, 2))
        x = shortcut + x.view(B, H * W, C)
        return x + self.mlp(self.norm2(x))


class PatchMerging(nn.Module):
    def __init__(self, res, dim):
        super().__init__()
        self.res = res
        self.norm, self.reduction = nn.LayerNorm(4 * dim), nn.Linear(4 * dim, 2 * dim, bias=False)

    def forward(self, x):
        B, L, C = x.shape
        x = x.view(B, self.res, self.res, C)
        x = torch.cat([x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2]], -1)
        return self.reduction(self.norm(x.view(B, -1, 4 * C)))


class Swin(nn.Module):
    def __init__(self, img=32, patch=2, dim=16, ws=4, heads=(2, 4), classes=10):
        super().__init__()
        res = img // patch
        self.patch_embed = nn.Conv2d(3, dim, patch, patch)
        self.pe_norm = nn.LayerNorm(dim)
        self.stage1 = nn.Sequential(SwinBlock(dim, res, heads[0], ws, 0), SwinBlock(dim, res, heads[0], ws, ws // 2))
        self.merge = PatchMerging(res, dim)
        self.stage2 = nn.Sequential(SwinBlock(2 * dim, res // 2, heads[1], ws, 0),
                                    SwinBlock(2 * dim, res // 2, heads[1], ws, ws // 2))
        self.norm = nn.LayerNorm(2 * dim)
        self.head = nn.Linear(2 * dim, classes)

    def forward(self, x):
        x = self.pe_norm(self.patch_embed(x).flatten(2).transpose(1, 2))
        x = self.stage2(self.merge(self.stage1(x)))
        return self.head(self.norm(x).mean(1))


def swin() -> Model:
    return Model(_perturb_norms(Swin()), (torch.randn(1, 3, 32, 32),), ["pixel_values"], ["logits"])


# --------------------------------------------------------------------------------------------------
# UNet with GroupNorm (diffusers UNet2DModel: ResnetBlock2D, Downsample2D, Upsample2D, mid attention)
# --------------------------------------------------------------------------------------------------


def timestep_embedding(t, dim: int):
    """diffusers get_timestep_embedding (flip_sin_to_cos=True, shift 0)."""
    half = dim // 2
    exponent = -math.log(10000) * torch.arange(half, dtype=torch.float32) / half
    emb = t[:, None].float() * torch.exp(exponent)[None, :]
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=-1)
    return torch.cat([emb[:, half:], emb[:, :half]], dim=-1)


class ResnetBlock2D(nn.Module):
    def __init__(self, cin, cout, temb=None, groups=8):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, cin, eps=1e-6)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.time_emb_proj = nn.Linear(temb, cout) if temb else None
        self.norm2 = nn.GroupNorm(groups, cout, eps=1e-6)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.nonlinearity = nn.SiLU()
        self.conv_shortcut = nn.Conv2d(cin, cout, 1) if cin != cout else None

    def forward(self, x, temb=None):
        h = self.conv1(self.nonlinearity(self.norm1(x)))
        if temb is not None:
            h = h + self.time_emb_proj(self.nonlinearity(temb))[:, :, None, None]
        h = self.conv2(self.nonlinearity(self.norm2(h)))
        if self.conv_shortcut is not None:
            x = self.conv_shortcut(x)
        return x + h


class AttnBlock(nn.Module):
    """diffusers Attention with residual_connection and group_norm (UNetMidBlock2D)."""

    def __init__(self, c, groups=8):
        super().__init__()
        self.group_norm = nn.GroupNorm(groups, c, eps=1e-6)
        self.to_q, self.to_k, self.to_v, self.to_out = (nn.Linear(c, c) for _ in range(4))

    def forward(self, x):
        B, C, H, W = x.shape
        h = self.group_norm(x).view(B, C, H * W).transpose(1, 2)
        q, k, v = self.to_q(h), self.to_k(h), self.to_v(h)
        h = F.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None])[:, 0]
        h = self.to_out(h).transpose(1, 2).reshape(B, C, H, W)
        return x + h


class UNet2D(nn.Module):
    def __init__(self, cin=4, ch=(32, 64), tdim=64):
        super().__init__()
        self.tdim = ch[0]
        self.time_embedding = nn.Sequential(nn.Linear(ch[0], tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.conv_in = nn.Conv2d(cin, ch[0], 3, padding=1)
        self.down0 = ResnetBlock2D(ch[0], ch[0], tdim)
        self.downsample = nn.Conv2d(ch[0], ch[0], 3, stride=2, padding=1)
        self.down1 = ResnetBlock2D(ch[0], ch[1], tdim)
        self.mid1, self.mid_attn, self.mid2 = ResnetBlock2D(ch[1], ch[1], tdim), AttnBlock(ch[1]), \
            ResnetBlock2D(ch[1], ch[1], tdim)
        self.up1 = ResnetBlock2D(ch[1] + ch[1], ch[1], tdim)
        self.upsample_conv = nn.Conv2d(ch[1], ch[1], 3, padding=1)
        self.up0 = ResnetBlock2D(ch[1] + ch[0], ch[0], tdim)
        self.conv_norm_out = nn.GroupNorm(8, ch[0], eps=1e-6)
        self.conv_act = nn.SiLU()
        self.conv_out = nn.Conv2d(ch[0], cin, 3, padding=1)

    def forward(self, sample, timestep):
        temb = self.time_embedding(timestep_embedding(timestep, self.tdim))
        x = self.conv_in(sample)
        s0 = self.down0(x, temb)
        s1 = self.down1(self.downsample(s0), temb)
        m = self.mid2(self.mid_attn(self.mid1(s1, temb)), temb)
        u = self.up1(torch.cat([m, s1], 1), temb)
        u = self.upsample_conv(F.interpolate(u, scale_factor=2.0, mode="nearest"))
        u = self.up0(torch.cat([u, s0], 1), temb)
        return self.conv_out(self.conv_act(self.conv_norm_out(u)))


def unet_groupnorm() -> Model:
    return Model(_perturb_norms(UNet2D()), (torch.randn(1, 4, 16, 16), torch.tensor([10.0])),
                 ["sample", "timestep"], ["noise_pred"])


# --------------------------------------------------------------------------------------------------
# VAE-style decoders with a custom op (a torch.autograd.Function exported as custom::...) before
# GroupNorm, as in repros/mnn-groupnorm-unregistered-custom-op
# --------------------------------------------------------------------------------------------------


class FeatureConversion(torch.autograd.Function):
    """A user's op that doubles the channels; exported as one custom::FeatureConversion node."""

    @staticmethod
    def forward(ctx, x):
        return torch.cat([x, x * 2.0], 1)

    @staticmethod
    def symbolic(g, x):
        return g.op("custom::FeatureConversion", x)


class FusedLeakyReLU(torch.autograd.Function):
    """A shape-preserving user op (StyleGAN2's fused_leaky_relu, without its bias): custom::FusedLeakyReLU."""

    @staticmethod
    def forward(ctx, x):
        return F.leaky_relu(x, 0.2) * math.sqrt(2.0)

    @staticmethod
    def symbolic(g, x):
        return g.op("custom::FusedLeakyReLU", x)


class CustomDecoder(nn.Module):
    """diffusers Decoder layout (conv_in, mid ResnetBlock2D, up block with Upsample2D, norm_out, SiLU,
    conv_out) with a user op after conv_in. `mode`:
      direct    custom op (64 -> 128 channels) -> ResnetBlock2D (GroupNorm first)
      scaled    custom op -> x * scale (latent scaling) -> ResnetBlock2D: an elementwise op in between
      residual  custom op -> + skip (a 1x1 conv of the latent) -> ResnetBlock2D
      same      a shape-preserving custom op -> ResnetBlock2D
      batchnorm custom op -> BatchNorm2d -> ReLU: a custom op with no GroupNorm after it
    """

    def __init__(self, mode: str, latent=4, ch=64):
        super().__init__()
        self.mode = mode
        self.conv_in = nn.Conv2d(latent, ch, 3, padding=1)
        wide = ch if mode == "same" else 2 * ch
        self.skip = nn.Conv2d(latent, wide, 1) if mode == "residual" else None
        if mode == "batchnorm":
            self.mid = nn.Sequential(nn.BatchNorm2d(wide), nn.ReLU(), nn.Conv2d(wide, ch, 3, padding=1))
        else:
            self.mid = ResnetBlock2D(wide, ch, groups=32)
        self.up_conv = nn.Conv2d(ch, ch, 3, padding=1)
        self.up_block = ResnetBlock2D(ch, ch, groups=32)
        self.norm_out = nn.GroupNorm(32, ch, eps=1e-6)
        self.conv_out = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, z):
        x = self.conv_in(z)
        x = FusedLeakyReLU.apply(x) if self.mode == "same" else FeatureConversion.apply(x)
        if self.mode == "scaled":
            x = x * 0.5
        elif self.mode == "residual":
            x = x + self.skip(z)
        x = self.mid(x)
        x = self.up_conv(F.interpolate(x, scale_factor=2.0, mode="nearest"))
        x = self.up_block(x)
        return self.conv_out(F.silu(self.norm_out(x)))


def _custom(mode: str) -> Callable[[], Model]:
    def build() -> Model:
        return Model(_perturb_norms(CustomDecoder(mode)), (torch.randn(1, 4, 8, 8),), ["latent"], ["image"],
                     export_kwargs={"custom_opsets": {"custom": 1}})
    build.__name__ = f"decoder_custom_{mode}"
    return build


# --------------------------------------------------------------------------------------------------
# GRU / LSTM encoders (batch_first), with and without state inputs
# --------------------------------------------------------------------------------------------------

T, FEAT, HID, OUT = 8, 16, 32, 8


class RNNEncoder(nn.Module):
    """Linear -> ReLU -> GRU/LSTM (batch_first) -> Linear, as streaming ASR/KWS encoders.
    state: "input"     h0 (and c0) are model inputs of shape (layers, B, H)
           "none"      no initial state (zeros)
           "unsqueeze" h0 (and c0) come in as (B, H) and are unsqueezed to (1, B, H)"""

    def __init__(self, cell: str, layers: int, state: str):
        super().__init__()
        self.cell, self.state = cell, state
        self.fc_in = nn.Linear(FEAT, HID)
        self.rnn = (nn.GRU if cell == "gru" else nn.LSTM)(HID, HID, num_layers=layers, batch_first=True)
        self.fc_out = nn.Linear(HID, OUT)

    def forward(self, x, *state):
        x = torch.relu(self.fc_in(x))
        if self.state == "unsqueeze":
            state = tuple(s.unsqueeze(0) for s in state)
        if self.cell == "gru":
            seq, hn = self.rnn(x, state[0]) if state else self.rnn(x)
            return self.fc_out(seq), hn
        seq, (hn, cn) = self.rnn(x, tuple(state)) if state else self.rnn(x)
        return self.fc_out(seq), hn, cn


def _rnn(cell: str, layers: int, state: str) -> Callable[[], Model]:
    def build() -> Model:
        x = torch.randn(1, T, FEAT)
        names, outs = ["x"], ["y", "hn"] + (["cn"] if cell == "lstm" else [])
        inputs = [x]
        if state != "none":
            shape = (1, HID) if state == "unsqueeze" else (layers, 1, HID)
            for s in ("h0",) + (("c0",) if cell == "lstm" else ()):
                inputs.append(torch.randn(*shape) * 0.5)
                names.append(s)
        return Model(RNNEncoder(cell, layers, state).eval(), tuple(inputs), names, outs)
    build.__name__ = f"{cell}_{layers}l_{state}"
    return build


# --------------------------------------------------------------------------------------------------
# LLaMA-style transformer block: RMSNorm (x.pow(2).mean(-1)), RoPE, causal attention, SwiGLU
# --------------------------------------------------------------------------------------------------


class RMSNorm(nn.Module):
    """transformers LlamaRMSNorm."""

    is_norm = True

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, dim=64, heads=4, seq=16):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.input_layernorm, self.post_attention_layernorm = RMSNorm(dim), RMSNorm(dim)
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (nn.Linear(dim, dim, bias=False) for _ in range(4))
        self.gate_proj, self.up_proj = nn.Linear(dim, 2 * dim, bias=False), nn.Linear(dim, 2 * dim, bias=False)
        self.down_proj = nn.Linear(2 * dim, dim, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        freqs = torch.outer(torch.arange(seq).float(), inv)
        emb = torch.cat([freqs, freqs], -1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)
        self.register_buffer("mask", torch.full((seq, seq), float("-inf")).triu(1), persistent=False)

    def forward(self, h):
        B, S, D = h.shape
        x = self.input_layernorm(h)
        q, k, v = (p(x).view(B, S, self.heads, self.hd).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        q = q * self.cos + rotate_half(q) * self.sin
        k = k * self.cos + rotate_half(k) * self.sin
        att = (q @ k.transpose(2, 3)) / math.sqrt(self.hd) + self.mask
        o = (att.softmax(-1) @ v).transpose(1, 2).reshape(B, S, D)
        h = h + self.o_proj(o)
        x = self.post_attention_layernorm(h)
        return h + self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class TinyLlama(nn.Module):
    def __init__(self, dim=64, layers=2):
        super().__init__()
        self.layers = nn.Sequential(*[LlamaBlock(dim) for _ in range(layers)])
        self.norm = RMSNorm(dim)

    def forward(self, inputs_embeds):
        return self.norm(self.layers(inputs_embeds))


def llama_rmsnorm() -> Model:
    return Model(_perturb_norms(TinyLlama()), (torch.randn(1, 16, 64),), ["inputs_embeds"], ["hidden_states"])


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


# ==================================================================================================
# HELD-OUT families (added after the trigger patterns were tuned; see HELD_OUT below the registry)
# ==================================================================================================


def _perturb_norms_1d(module: nn.Module) -> nn.Module:
    """_perturb_norms, plus BatchNorm1d (its affine parameters and running statistics)."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.BatchNorm1d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    return _perturb_norms(module)


def _he_init(m: nn.Module) -> None:
    """He-normal weights (std sqrt(2 / fan_in)), small biases, for a Conv / Linear layer."""
    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
    if m.bias is not None:
        nn.init.uniform_(m.bias, -0.1, 0.1)


def _trained_like(module: nn.Module, example: torch.Tensor, batch: int = 8, steps: int = 2) -> nn.Module:
    """Scales as a trained network has them, so that a wrongly computed early layer shows in the
    outputs (with PyTorch's default init and made-up BatchNorm statistics the signal of a deep CNN
    dies out and the outputs are its last biases, within the bench's 1% tolerance whatever the early
    layers compute): He-normal Conv / Linear weights, _perturb_norms_1d's affine parameters, then
    BatchNorm running statistics measured on random batches shaped like `example`."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Linear)) and not nn.utils.parametrize.is_parametrized(m):
                _he_init(m)
        _perturb_norms_1d(module)
        bns = [m for m in module.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
        for m in bns:
            m.reset_running_stats()
            m.momentum = None  # a cumulative average over the steps
        module.train()
        for _ in range(steps):
            module(torch.randn(batch, *example.shape[1:]))
        for m in bns:
            m.momentum = 0.1
    return module.eval()


# --------------------------------------------------------------------------------------------------
# EfficientNet-B0 (torchvision efficientnet.MBConv): SiLU, depthwise 3x3/5x5, squeeze-excitation
# (avgpool -> 1x1 conv -> SiLU -> 1x1 conv -> Sigmoid -> scale); stochastic depth is identity in eval
# --------------------------------------------------------------------------------------------------


def _conv_bn_act(cin, cout, k=3, s=1, groups=1, act=nn.SiLU):
    layers = [nn.Conv2d(cin, cout, k, s, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, act(inplace=True)) if act is not None else nn.Sequential(*layers)


class SqueezeExcitation(nn.Module):
    """torchvision.ops.SqueezeExcitation: adaptive_avg_pool2d(1), fc1/fc2 as 1x1 convs."""

    def __init__(self, c, squeeze, activation=nn.SiLU, scale_activation=nn.Sigmoid):
        super().__init__()
        self.fc1, self.fc2 = nn.Conv2d(c, squeeze, 1), nn.Conv2d(squeeze, c, 1)
        self.activation, self.scale_activation = activation(), scale_activation()

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * self.scale_activation(self.fc2(self.activation(self.fc1(s))))


class MBConv(nn.Module):
    def __init__(self, cin, cout, k, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        layers = [] if expand == 1 else [_conv_bn_act(cin, hidden, 1)]
        layers += [_conv_bn_act(hidden, hidden, k, stride, groups=hidden),
                   SqueezeExcitation(hidden, max(1, cin // 4)),
                   _conv_bn_act(hidden, cout, 1, act=None)]
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        out = self.block(x)
        return out + x if self.use_res else out


class EfficientNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        cfg = [(1, 3, 1, 8, 1), (6, 3, 2, 16, 2), (6, 5, 2, 24, 2)]  # expand, kernel, stride, out, repeats
        layers, cin = [_conv_bn_act(3, 16, 3, 2)], 16
        for t, k, s, c, n in cfg:
            for i in range(n):
                layers.append(MBConv(cin, c, k, s if i == 0 else 1, t))
                cin = c
        layers.append(_conv_bn_act(cin, 64, 1))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(64, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


def efficientnet_b0() -> Model:
    x = torch.randn(1, 3, 64, 64)
    return Model(_trained_like(EfficientNet(), x), (x,), ["input"], ["logits"])


# --------------------------------------------------------------------------------------------------
# MobileNetV3-Small (torchvision mobilenetv3.InvertedResidual): Hardswish, SE with ReLU + Hardsigmoid
# --------------------------------------------------------------------------------------------------


def _make_divisible(v, divisor=8):
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


class InvertedResidualV3(nn.Module):
    def __init__(self, cin, k, hidden, cout, se, hs, stride):
        super().__init__()
        act = nn.Hardswish if hs else nn.ReLU
        self.use_res = stride == 1 and cin == cout
        layers = [] if hidden == cin else [_conv_bn_act(cin, hidden, 1, act=act)]
        layers.append(_conv_bn_act(hidden, hidden, k, stride, groups=hidden, act=act))
        if se:
            layers.append(SqueezeExcitation(hidden, _make_divisible(hidden // 4), nn.ReLU, nn.Hardsigmoid))
        layers.append(_conv_bn_act(hidden, cout, 1, act=None))
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        out = self.block(x)
        return out + x if self.use_res else out


class MobileNetV3(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        cfg = [(16, 3, 16, 16, True, False, 2), (16, 3, 72, 24, False, False, 2), (24, 3, 88, 24, False, False, 1),
               (24, 5, 96, 40, True, True, 2), (40, 5, 120, 40, True, True, 1)]  # in, k, exp, out, SE, HS, s
        layers = [_conv_bn_act(3, 16, 3, 2, act=nn.Hardswish)]
        layers += [InvertedResidualV3(*c) for c in cfg]
        layers.append(_conv_bn_act(40, 96, 1, act=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(96, 128), nn.Hardswish(inplace=True), nn.Dropout(0.2),
                                        nn.Linear(128, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


def mobilenetv3() -> Model:
    x = torch.randn(1, 3, 64, 64)
    return Model(_trained_like(MobileNetV3(), x), (x,), ["input"], ["logits"])


# --------------------------------------------------------------------------------------------------
# ShuffleNetV2 (torchvision shufflenetv2): channel split (chunk), channel shuffle (view/transpose/view)
# --------------------------------------------------------------------------------------------------


def channel_shuffle(x, groups: int):
    b, c, h, w = x.size()
    x = x.view(b, groups, c // groups, h, w)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(b, -1, h, w)


class ShuffleUnit(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.stride = stride
        bf = cout // 2
        if stride > 1:
            self.branch1 = nn.Sequential(
                nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), nn.BatchNorm2d(cin),
                nn.Conv2d(cin, bf, 1, bias=False), nn.BatchNorm2d(bf), nn.ReLU(inplace=True))
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(cin if stride > 1 else bf, bf, 1, bias=False), nn.BatchNorm2d(bf), nn.ReLU(inplace=True),
            nn.Conv2d(bf, bf, 3, stride, 1, groups=bf, bias=False), nn.BatchNorm2d(bf),
            nn.Conv2d(bf, bf, 1, bias=False), nn.BatchNorm2d(bf), nn.ReLU(inplace=True))

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    def __init__(self, stages=(2, 2), widths=(24, 48, 96, 128), classes=10):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(3, widths[0], 3, 2, 1, bias=False), nn.BatchNorm2d(widths[0]),
                                   nn.ReLU(inplace=True))
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        blocks, cin = [], widths[0]
        for n, cout in zip(stages, widths[1:]):
            blocks.append(nn.Sequential(ShuffleUnit(cin, cout, 2), *[ShuffleUnit(cout, cout, 1) for _ in range(n - 1)]))
            cin = cout
        self.stages = nn.Sequential(*blocks)
        self.conv5 = nn.Sequential(nn.Conv2d(cin, widths[-1], 1, bias=False), nn.BatchNorm2d(widths[-1]),
                                   nn.ReLU(inplace=True))
        self.fc = nn.Linear(widths[-1], classes)

    def forward(self, x):
        x = self.conv5(self.stages(self.maxpool(self.conv1(x))))
        return self.fc(x.mean([2, 3]))


def shufflenetv2() -> Model:
    x = torch.randn(1, 3, 64, 64)
    return Model(_trained_like(ShuffleNetV2(), x), (x,), ["input"], ["logits"])


# --------------------------------------------------------------------------------------------------
# WaveNet-style stack of dilated causal Conv1d (r9y9/wavenet_vocoder ResidualConv1dGLU): weight-normed
# convs, causal by padding both sides and slicing the tail off, gated tanh * sigmoid, residual and skip
# --------------------------------------------------------------------------------------------------


def _wn_conv1d(cin, cout, k=1, dilation=1, padding=0):
    conv = nn.Conv1d(cin, cout, k, padding=padding, dilation=dilation)
    _he_init(conv)  # before weight_norm splits the weight into g and v
    return nn.utils.parametrizations.weight_norm(conv)


class ResidualConv1dGLU(nn.Module):
    def __init__(self, res=16, gate=32, skip=16, k=3, dilation=1):
        super().__init__()
        self.padding = (k - 1) * dilation
        self.conv = _wn_conv1d(res, gate, k, dilation, self.padding)
        self.conv1x1_out = _wn_conv1d(gate // 2, res)
        self.conv1x1_skip = _wn_conv1d(gate // 2, skip)

    def forward(self, x):
        residual = x
        x = self.conv(x)
        x = x[:, :, :residual.size(-1)]  # causal: drop the right padding
        a, b = x.split(x.size(1) // 2, dim=1)
        x = torch.tanh(a) * torch.sigmoid(b)
        s = self.conv1x1_skip(x)
        x = (self.conv1x1_out(x) + residual) * math.sqrt(0.5)
        return x, s


class WaveNet(nn.Module):
    def __init__(self, cin=1, res=16, skip=16, out=32, layers=8, stacks=2):
        super().__init__()
        self.first_conv = _wn_conv1d(cin, res)
        per = layers // stacks
        self.conv_layers = nn.ModuleList([ResidualConv1dGLU(res, 2 * res, skip, 3, 2 ** (i % per))
                                          for i in range(layers)])
        self.last_conv_layers = nn.Sequential(nn.ReLU(inplace=True), _wn_conv1d(skip, skip), nn.ReLU(inplace=True),
                                              _wn_conv1d(skip, out))

    def forward(self, x):
        x = self.first_conv(x)
        skips = 0
        for f in self.conv_layers:
            x, h = f(x)
            skips = skips + h
        skips = skips * math.sqrt(1.0 / len(self.conv_layers))
        return self.last_conv_layers(skips)


def wavenet_tcn() -> Model:
    x = torch.randn(1, 1, 128)
    return Model(_trained_like(WaveNet(), x), (x,), ["audio"], ["logits"])


# --------------------------------------------------------------------------------------------------
# CRNN for OCR (meijieru/crnn.pytorch): VGG-ish conv backbone with (2, 1)-stride pools down to height 1,
# squeeze(2), permute to (T, B, C), two BidirectionalLSTM (LSTM -> view(T*b, h) -> Linear -> view)
# --------------------------------------------------------------------------------------------------


class BidirectionalLSTM(nn.Module):
    def __init__(self, nin, nhidden, nout):
        super().__init__()
        self.rnn = nn.LSTM(nin, nhidden, bidirectional=True)
        self.embedding = nn.Linear(nhidden * 2, nout)

    def forward(self, x):
        recurrent, _ = self.rnn(x)
        T, b, h = recurrent.size()
        output = self.embedding(recurrent.view(T * b, h))
        return output.view(T, b, -1)


class CRNN(nn.Module):
    def __init__(self, nc=1, classes=12, nh=32, nm=(16, 32, 64, 64, 64, 64, 64)):
        super().__init__()
        ks, ps, ss = [3, 3, 3, 3, 3, 3, 2], [1, 1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1, 1]
        cnn = nn.Sequential()

        def conv_relu(i, bn=False):
            cin = nc if i == 0 else nm[i - 1]
            cnn.add_module(f"conv{i}", nn.Conv2d(cin, nm[i], ks[i], ss[i], ps[i]))
            if bn:
                cnn.add_module(f"batchnorm{i}", nn.BatchNorm2d(nm[i]))
            cnn.add_module(f"relu{i}", nn.ReLU(True))

        conv_relu(0)
        cnn.add_module("pooling0", nn.MaxPool2d(2, 2))
        conv_relu(1)
        cnn.add_module("pooling1", nn.MaxPool2d(2, 2))
        conv_relu(2, True)
        conv_relu(3)
        cnn.add_module("pooling2", nn.MaxPool2d((2, 2), (2, 1), (0, 1)))
        conv_relu(4, True)
        conv_relu(5)
        cnn.add_module("pooling3", nn.MaxPool2d((2, 2), (2, 1), (0, 1)))
        conv_relu(6, True)
        self.cnn = cnn
        self.rnn = nn.Sequential(BidirectionalLSTM(nm[-1], nh, nh), BidirectionalLSTM(nh, nh, classes))

    def forward(self, x):
        conv = self.cnn(x)
        b, c, h, w = conv.size()
        assert h == 1, "the height of conv must be 1"
        conv = conv.squeeze(2).permute(2, 0, 1)  # (w, b, c)
        return F.log_softmax(self.rnn(conv), dim=2)


def crnn() -> Model:
    x = torch.randn(1, 1, 32, 64)
    return Model(_trained_like(CRNN(), x), (x,), ["image"], ["log_probs"])


# --------------------------------------------------------------------------------------------------
# MobileViT (apple/ml-cvnets mobilevit_block.MobileViTBlock): local conv, unfold into patches by
# reshape/transpose, transformer (pre-norm, SiLU FFN), fold back, 1x1 projection, concat fusion
# --------------------------------------------------------------------------------------------------


class MobileViTAttention(nn.Module):
    """cvnets MultiHeadAttention: one qkv Linear, explicit matmul / softmax."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.scaling = self.hd ** -0.5
        self.qkv_proj, self.out_proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv_proj(x).reshape(b, n, 3, self.heads, -1).transpose(1, 3).contiguous()
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]  # (b, heads, n, hd)
        attn = torch.matmul(q * self.scaling, k.transpose(-1, -2)).softmax(-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, n, -1)
        return self.out_proj(out)


class MobileViTTransformer(nn.Module):
    def __init__(self, dim, heads, ffn):
        super().__init__()
        self.pre_norm_mha = nn.Sequential(nn.LayerNorm(dim), MobileViTAttention(dim, heads))
        self.pre_norm_ffn = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, ffn), nn.SiLU(), nn.Linear(ffn, dim))

    def forward(self, x):
        x = x + self.pre_norm_mha(x)
        return x + self.pre_norm_ffn(x)


class MobileViTBlock(nn.Module):
    def __init__(self, cin, dim, ffn, layers=2, heads=4, patch=2):
        super().__init__()
        self.patch_h = self.patch_w = patch
        self.local_rep = nn.Sequential(_conv_bn_act(cin, cin, 3), nn.Conv2d(cin, dim, 1, bias=False))
        self.global_rep = nn.Sequential(*[MobileViTTransformer(dim, heads, ffn) for _ in range(layers)],
                                        nn.LayerNorm(dim))
        self.conv_proj = _conv_bn_act(dim, cin, 1)
        self.fusion = _conv_bn_act(2 * cin, cin, 3)

    def unfolding(self, fm):
        ph, pw = self.patch_h, self.patch_w
        B, C, H, W = fm.shape
        nh, nw = H // ph, W // pw
        x = fm.reshape(B * C * nh, ph, nw, pw).transpose(1, 2)  # (B*C*nh, nw, ph, pw)
        x = x.reshape(B, C, nh * nw, ph * pw).transpose(1, 3)  # (B, P, N, C)
        return x.reshape(B * ph * pw, nh * nw, -1), (B, C, H, W, nh, nw)

    def folding(self, patches, info):
        B, C, H, W, nh, nw = info
        ph, pw = self.patch_h, self.patch_w
        x = patches.contiguous().view(B, ph * pw, nh * nw, -1).transpose(1, 3)  # (B, C, N, P)
        x = x.reshape(B * C * nh, nw, ph, pw).transpose(1, 2)
        return x.reshape(B, C, nh * ph, nw * pw)

    def forward(self, x):
        res = x
        patches, info = self.unfolding(self.local_rep(x))
        fm = self.conv_proj(self.folding(self.global_rep(patches), info))
        return self.fusion(torch.cat((res, fm), dim=1))


class MobileViT(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv_1 = _conv_bn_act(3, 16, 3, 2)
        self.layer_1 = nn.Sequential(
            nn.Conv2d(16, 32, 1, bias=False), nn.BatchNorm2d(32), nn.SiLU(),
            nn.Conv2d(32, 32, 3, 2, 1, groups=32, bias=False), nn.BatchNorm2d(32), nn.SiLU(),
            nn.Conv2d(32, 24, 1, bias=False), nn.BatchNorm2d(24))  # MV2 block, stride 2, SiLU
        self.layer_2 = MobileViTBlock(24, 32, 64)
        self.conv_1x1_exp = _conv_bn_act(24, 64, 1)
        self.classifier = nn.Linear(64, classes)

    def forward(self, x):
        x = self.conv_1x1_exp(self.layer_2(self.layer_1(self.conv_1(x))))
        return self.classifier(F.adaptive_avg_pool2d(x, 1).flatten(1))


def mobilevit() -> Model:
    x = torch.randn(1, 3, 64, 64)
    return Model(_trained_like(MobileViT(), x), (x,), ["pixel_values"], ["logits"])


# --------------------------------------------------------------------------------------------------
# Conformer (torchaudio.models.conformer.ConformerLayer): half-step FFNs (LayerNorm, Linear, SiLU),
# nn.MultiheadAttention (time first), convolution module (LayerNorm, pointwise Conv1d, GLU, depthwise
# Conv1d, BatchNorm1d, SiLU, pointwise Conv1d), final LayerNorm
# --------------------------------------------------------------------------------------------------


class ConformerConvModule(nn.Module):
    def __init__(self, dim, k=7):
        super().__init__()
        self.layer_norm = nn.LayerNorm(dim)
        self.sequential = nn.Sequential(
            nn.Conv1d(dim, 2 * dim, 1), nn.GLU(dim=1), nn.Conv1d(dim, dim, k, padding=(k - 1) // 2, groups=dim),
            nn.BatchNorm1d(dim), nn.SiLU(), nn.Conv1d(dim, dim, 1), nn.Dropout(0.0))

    def forward(self, x):  # (B, T, D)
        x = self.layer_norm(x).transpose(1, 2)
        return self.sequential(x).transpose(1, 2)


class ConformerFFN(nn.Sequential):
    def __init__(self, dim, hidden):
        super().__init__(nn.LayerNorm(dim), nn.Linear(dim, hidden), nn.SiLU(), nn.Dropout(0.0),
                         nn.Linear(hidden, dim), nn.Dropout(0.0))


class ConformerLayer(nn.Module):
    def __init__(self, dim, heads, ffn, k=7):
        super().__init__()
        self.ffn1 = ConformerFFN(dim, ffn)
        self.self_attn_layer_norm = nn.LayerNorm(dim)
        self.self_attn = nn.MultiheadAttention(dim, heads, dropout=0.0)
        self.conv_module = ConformerConvModule(dim, k)
        self.ffn2 = ConformerFFN(dim, ffn)
        self.final_layer_norm = nn.LayerNorm(dim)

    def forward(self, x):  # (T, B, D), as torchaudio
        x = 0.5 * self.ffn1(x) + x
        residual = x
        x = self.self_attn_layer_norm(x)
        x, _ = self.self_attn(x, x, x, need_weights=False)
        x = x + residual
        x = x + self.conv_module(x.transpose(0, 1)).transpose(0, 1)
        x = 0.5 * self.ffn2(x) + x
        return self.final_layer_norm(x)


class Conformer(nn.Module):
    def __init__(self, feat=40, dim=32, heads=4, ffn=64, layers=2):
        super().__init__()
        self.input_linear = nn.Linear(feat, dim)
        self.conformer_layers = nn.ModuleList([ConformerLayer(dim, heads, ffn) for _ in range(layers)])

    def forward(self, features):  # (B, T, feat)
        x = self.input_linear(features).transpose(0, 1)
        for layer in self.conformer_layers:
            x = layer(x)
        return x.transpose(0, 1)


def conformer() -> Model:
    return Model(_perturb_norms_1d(Conformer()), (torch.randn(1, 32, 40),), ["features"], ["encoded"])


# --------------------------------------------------------------------------------------------------
# DETR decoder head (facebookresearch/detr models/transformer.py, position_encoding.py, detr.py):
# input_proj, PositionEmbeddingSine from the (all-valid) mask with cumsum, post-norm decoder layers
# (self-attention over learned queries, cross-attention to memory + pos), class and box heads
# --------------------------------------------------------------------------------------------------


class PositionEmbeddingSine(nn.Module):
    def __init__(self, num_pos_feats=16, temperature=10000):
        super().__init__()
        self.num_pos_feats, self.temperature, self.scale = num_pos_feats, temperature, 2 * math.pi

    def forward(self, x):
        mask = torch.zeros((x.shape[0], x.shape[2], x.shape[3]), dtype=torch.bool, device=x.device)
        not_mask = ~mask
        y_embed = not_mask.cumsum(1, dtype=torch.float32)
        x_embed = not_mask.cumsum(2, dtype=torch.float32)
        eps = 1e-6
        y_embed = y_embed / (y_embed[:, -1:, :] + eps) * self.scale
        x_embed = x_embed / (x_embed[:, :, -1:] + eps) * self.scale
        dim_t = torch.arange(self.num_pos_feats, dtype=torch.float32, device=x.device)
        dim_t = self.temperature ** (2 * (dim_t // 2) / self.num_pos_feats)
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
        return torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)


class DetrDecoderLayer(nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d, heads, dropout=0.0)
        self.multihead_attn = nn.MultiheadAttention(d, heads, dropout=0.0)
        self.linear1, self.linear2 = nn.Linear(d, ffn), nn.Linear(ffn, d)
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)

    def forward(self, tgt, memory, pos, query_pos):  # forward_post
        q = k = tgt + query_pos
        tgt = self.norm1(tgt + self.self_attn(q, k, value=tgt)[0])
        tgt2 = self.multihead_attn(query=tgt + query_pos, key=memory + pos, value=memory)[0]
        tgt = self.norm2(tgt + tgt2)
        tgt = self.norm3(tgt + self.linear2(F.relu(self.linear1(tgt))))
        return tgt


class DetrMLP(nn.Module):
    def __init__(self, din, hidden, dout, layers):
        super().__init__()
        h = [hidden] * (layers - 1)
        self.layers = nn.ModuleList(nn.Linear(n, k) for n, k in zip([din] + h, h + [dout]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = F.relu(layer(x)) if i < len(self.layers) - 1 else layer(x)
        return x


class DetrHead(nn.Module):
    def __init__(self, cin=64, d=32, heads=4, ffn=64, layers=2, queries=10, classes=9):
        super().__init__()
        self.input_proj = nn.Conv2d(cin, d, 1)
        self.position_embedding = PositionEmbeddingSine(d // 2)
        self.query_embed = nn.Embedding(queries, d)
        self.layers = nn.ModuleList([DetrDecoderLayer(d, heads, ffn) for _ in range(layers)])
        self.norm = nn.LayerNorm(d)
        self.class_embed = nn.Linear(d, classes + 1)
        self.bbox_embed = DetrMLP(d, d, 4, 3)

    def forward(self, features):
        pos = self.position_embedding(features).flatten(2).permute(2, 0, 1)  # (HW, B, d)
        src = self.input_proj(features)
        bs = src.shape[0]
        memory = src.flatten(2).permute(2, 0, 1)
        query_pos = self.query_embed.weight.unsqueeze(1).repeat(1, bs, 1)
        tgt = torch.zeros_like(query_pos)
        for layer in self.layers:
            tgt = layer(tgt, memory, pos, query_pos)
        hs = self.norm(tgt).transpose(0, 1)  # (B, Q, d)
        return self.class_embed(hs), self.bbox_embed(hs).sigmoid()


def detr_decoder() -> Model:
    return Model(_perturb_norms(DetrHead()), (torch.randn(1, 64, 8, 8),), ["features"], ["pred_logits", "pred_boxes"])


# ==================================================================================================
# end of the HELD-OUT families
# ==================================================================================================

# --------------------------------------------------------------------------------------------------

# name -> (builder, kind). kind "cnn": also quantized with onnxruntime and mnnquant; "rnn": mnnquant.
FAMILIES: dict[str, tuple[Callable[[], Model], str]] = {
    "resnet": (resnet, "cnn"),
    "resnet-preproc": (resnet_preproc, "cnn"),
    "mobilenetv2": (mobilenetv2, "cnn"),
    "yolo": (yolo, "cnn"),
    "convnext": (convnext, "cnn"),
    "convnextv2": (convnextv2, "other"),
    "sam-neck": (sam_neck, "other"),
    "neck-ln-square": (_neck_ln("square"), "other"),
    "neck-ln-mul": (_neck_ln("mul"), "other"),
    "neck-ln-var": (_neck_ln("var"), "other"),
    "vit": (vit, "cnn"),
    "swin": (swin, "other"),
    "unet-groupnorm": (unet_groupnorm, "cnn"),
    "decoder-custom-direct": (_custom("direct"), "other"),
    "decoder-custom-scaled": (_custom("scaled"), "other"),
    "decoder-custom-residual": (_custom("residual"), "other"),
    "decoder-custom-same": (_custom("same"), "other"),
    "decoder-custom-batchnorm": (_custom("batchnorm"), "other"),
    "gru-1l-h0": (_rnn("gru", 1, "input"), "rnn"),
    "gru-1l-nostate": (_rnn("gru", 1, "none"), "rnn"),
    "gru-2l-h0": (_rnn("gru", 2, "input"), "rnn"),
    "gru-1l-h0-unsqueeze": (_rnn("gru", 1, "unsqueeze"), "rnn"),
    "lstm-1l-h0c0": (_rnn("lstm", 1, "input"), "rnn"),
    "lstm-1l-nostate": (_rnn("lstm", 1, "none"), "rnn"),
    "lstm-2l-h0c0": (_rnn("lstm", 2, "input"), "rnn"),
    "llama-rmsnorm": (llama_rmsnorm, "other"),
    "t5-rmsnorm-ff": (t5_rmsnorm_ff, "other"),
    "deconv-decoder": (deconv_decoder, "cnn"),
    "deconv-decoder-scale-left": (deconv_decoder_scale_left, "other"),
    "efficientnet-b0": (efficientnet_b0, "cnn"),
    "mobilenetv3": (mobilenetv3, "cnn"),
    "shufflenetv2": (shufflenetv2, "cnn"),
    "wavenet-tcn": (wavenet_tcn, "cnn"),
    "crnn": (crnn, "rnn"),
    "mobilevit": (mobilevit, "other"),
    "conformer": (conformer, "other"),
    "detr-decoder": (detr_decoder, "other"),
}

# families added after the trigger patterns were tuned: the bench reports them apart
HELD_OUT = frozenset({"efficientnet-b0", "mobilenetv3", "shufflenetv2", "wavenet-tcn", "crnn", "mobilevit",
                      "conformer", "detr-decoder"})


def build(name: str) -> Model:
    """The family's model, with weights seeded by its name (the same on every run)."""
    import zlib

    torch.manual_seed(zlib.crc32(name.encode()))
    return FAMILIES[name][0]()
