"""MobileViT: convolutions and a transformer over unfolded patches.
Held out: written after the trigger patterns were tuned (models.HELD_OUT)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .base import Model, _trained_like
from .mobile import _conv_bn_act


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
