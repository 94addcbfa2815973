"""Vision transformers: ViT (timm, fused attention) and Swin (window partition, shifted windows)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .base import Model, _perturb_norms


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
