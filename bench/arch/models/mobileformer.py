"""Mobile vision transformers with channel norms on 4-D maps: MobileViTv2 (GroupNorm(1, C) as its
LayerNorm2d, separable linear self-attention by 1x1 convs) and EfficientFormer (pooling token mixer
over BatchNorm'd 4-D stages, then a LayerNorm / attention stage over flattened tokens).
Held out: written after the trigger patterns were tuned (models.HELD_OUT)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .base import Model, _trained_like
from .mobile import _conv_bn_act


# --------------------------------------------------------------------------------------------------
# MobileViTv2 (apple/ml-cvnets mobilevit_v2_block.MobileViTBlockv2, norm "layer_norm_2d" =
# GroupNorm(1, C)): local depthwise + pointwise conv, unfold into (N, C, P, n) patches with
# F.unfold-free reshapes, LinearAttnFFN (GroupNorm, separable attention: 1x1 conv to 1 + 2C channels,
# softmax over patches, context vector, ReLU(v) * context; GroupNorm, 1x1 conv FFN), fold, 1x1 conv
# --------------------------------------------------------------------------------------------------


class LinearSelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.qkv_proj = nn.Conv2d(dim, 1 + 2 * dim, 1)
        self.out_proj = nn.Conv2d(dim, dim, 1)

    def forward(self, x):  # (N, C, P, n)
        q, k, v = torch.split(self.qkv_proj(x), [1, self.dim, self.dim], dim=1)
        scores = F.softmax(q, dim=-1)
        context = (k * scores).sum(dim=-1, keepdim=True)
        return self.out_proj(F.relu(v) * context.expand_as(v))


class LinearAttnFFN(nn.Module):
    def __init__(self, dim, ffn):
        super().__init__()
        self.pre_norm_attn = nn.Sequential(nn.GroupNorm(1, dim), LinearSelfAttention(dim))
        self.pre_norm_ffn = nn.Sequential(nn.GroupNorm(1, dim), nn.Conv2d(dim, ffn, 1), nn.SiLU(),
                                          nn.Conv2d(ffn, dim, 1))

    def forward(self, x):
        x = x + self.pre_norm_attn(x)
        return x + self.pre_norm_ffn(x)


class MobileViTv2Block(nn.Module):
    def __init__(self, cin, dim, ffn, depth=2, patch=2):
        super().__init__()
        self.patch = patch
        self.local_rep = nn.Sequential(_conv_bn_act(cin, cin, 3, 1, groups=cin, act=nn.SiLU),
                                       nn.Conv2d(cin, dim, 1, bias=False))
        self.global_rep = nn.Sequential(*[LinearAttnFFN(dim, ffn) for _ in range(depth)], nn.GroupNorm(1, dim))
        self.conv_proj = _conv_bn_act(dim, cin, 1, 1, act=None)

    def forward(self, x):
        fm = self.local_rep(x)
        n, c, h, w = fm.shape
        p = self.patch
        # cvnets unfolding_pytorch: (N, C, H, W) -> (N, C, P, n)
        patches = fm.reshape(n, c, h // p, p, w // p, p).permute(0, 1, 3, 5, 2, 4).reshape(n, c, p * p, -1)
        patches = self.global_rep(patches)
        fm = patches.reshape(n, c, p, p, h // p, w // p).permute(0, 1, 4, 2, 5, 3).reshape(n, c, h, w)
        return self.conv_proj(fm)


class MobileViTv2(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = _conv_bn_act(3, 16, 3, 2, act=nn.SiLU)
        self.layer1 = _conv_bn_act(16, 24, 3, 2, act=nn.SiLU)
        self.block1 = MobileViTv2Block(24, 32, 64)
        self.down = _conv_bn_act(24, 32, 3, 2, act=nn.SiLU)
        self.block2 = MobileViTv2Block(32, 48, 96)
        self.classifier = nn.Linear(32, classes)

    def forward(self, x):
        x = self.block1(self.layer1(self.stem(x)))
        x = self.block2(self.down(x))
        return self.classifier(x.mean((2, 3)))


def mobilevitv2() -> Model:
    x = torch.randn(1, 3, 64, 64)
    return Model(_trained_like(MobileViTv2(), x), (x,), ["pixel_values"], ["logits"])


# --------------------------------------------------------------------------------------------------
# EfficientFormer (snap-research/EfficientFormer efficientformer.py): stem of two stride-2 conv-BN-ReLU,
# Meta4D blocks (token mixer pool(x) - x with AvgPool2d(3, 1, 1, count_include_pad=False), layer scale
# of shape (C, 1, 1), 1x1 conv MLP with BatchNorm and GELU), Embedding (stride-2 conv + BN), Flat, then
# Meta3D blocks (LayerNorm, attention with a learned bias over positions, LayerNorm, Linear MLP),
# final LayerNorm, mean over tokens
# --------------------------------------------------------------------------------------------------


class Meta4D(nn.Module):
    def __init__(self, dim, mlp=4):
        super().__init__()
        self.pool = nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        self.mlp = nn.Sequential(nn.Conv2d(dim, dim * mlp, 1), nn.BatchNorm2d(dim * mlp), nn.GELU(),
                                 nn.Conv2d(dim * mlp, dim, 1), nn.BatchNorm2d(dim))
        self.layer_scale_1 = nn.Parameter(torch.full((dim,), 0.5))
        self.layer_scale_2 = nn.Parameter(torch.full((dim,), 0.5))

    def forward(self, x):
        x = x + self.layer_scale_1.unsqueeze(-1).unsqueeze(-1) * (self.pool(x) - x)
        return x + self.layer_scale_2.unsqueeze(-1).unsqueeze(-1) * self.mlp(x)


class Attention(nn.Module):
    def __init__(self, dim, key_dim=8, heads=4, resolution=4):
        super().__init__()
        self.heads, self.key_dim, self.scale = heads, key_dim, key_dim ** -0.5
        self.d = 2 * key_dim
        self.qkv = nn.Linear(dim, heads * (2 * key_dim + self.d))
        self.proj = nn.Linear(heads * self.d, dim)
        n = resolution * resolution
        self.attention_biases = nn.Parameter(torch.randn(heads, n) * 0.1)
        pts = [(i, j) for i in range(resolution) for j in range(resolution)]
        idx = [abs(a[0] - b[0]) * resolution + abs(a[1] - b[1]) for a in pts for b in pts]
        self.register_buffer("attention_bias_idxs", torch.tensor(idx).view(n, n), persistent=False)

    def forward(self, x):
        b, n, _ = x.shape
        qkv = self.qkv(x).reshape(b, n, self.heads, -1).permute(0, 2, 1, 3)
        q, k, v = qkv.split([self.key_dim, self.key_dim, self.d], dim=3)
        attn = (q @ k.transpose(-2, -1)) * self.scale + self.attention_biases[:, self.attention_bias_idxs]
        x = (attn.softmax(-1) @ v).transpose(1, 2).reshape(b, n, -1)
        return self.proj(x)


class Meta3D(nn.Module):
    def __init__(self, dim, mlp=4):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.token_mixer = Attention(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * mlp), nn.GELU(), nn.Linear(dim * mlp, dim))
        self.layer_scale_1 = nn.Parameter(torch.full((dim,), 0.5))
        self.layer_scale_2 = nn.Parameter(torch.full((dim,), 0.5))

    def forward(self, x):
        x = x + self.layer_scale_1 * self.token_mixer(self.norm1(x))
        return x + self.layer_scale_2 * self.mlp(self.norm2(x))


class EfficientFormer(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(_conv_bn_act(3, 8, 3, 2, act=nn.ReLU), _conv_bn_act(8, 16, 3, 2, act=nn.ReLU))
        self.stage1 = nn.Sequential(Meta4D(16), Meta4D(16))
        self.embed = _conv_bn_act(16, 32, 3, 2, act=None)
        self.stage2 = nn.Sequential(Meta4D(32))
        self.embed2 = _conv_bn_act(32, 48, 3, 2, act=None)
        self.stage3 = nn.Sequential(Meta3D(48), Meta3D(48))
        self.norm = nn.LayerNorm(48)
        self.head = nn.Linear(48, classes)

    def forward(self, x):
        x = self.stage2(self.embed(self.stage1(self.stem(x))))
        x = self.embed2(x).flatten(2).transpose(1, 2)  # Flat: (B, C, H, W) -> (B, N, C)
        x = self.norm(self.stage3(x))
        return self.head(x.mean(1))


def efficientformer() -> Model:
    x = torch.randn(1, 3, 64, 64)
    return Model(_trained_like(EfficientFormer(), x), (x,), ["pixel_values"], ["logits"])
