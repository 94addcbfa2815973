"""RT-DETR-style hybrid encoder (no deformable attention): a small conv backbone, input projections
with GroupNorm on (N, C, H, W), AIFI (one transformer encoder layer over the flattened top level,
2-D sin-cos position embedding), CCFM (top-down / bottom-up fusion with RepVGG-style CSP blocks),
and the encoder's query-selection heads over the flattened memory.
Held out: written after the trigger patterns were tuned (models.HELD_OUT)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .base import Model, _trained_like


def _cbs(cin, cout, k=1, s=1, act=True):
    """lyuwenyu/RT-DETR ConvNormLayer: Conv (no bias) + BatchNorm + SiLU."""
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, (k - 1) // 2, bias=False), nn.BatchNorm2d(cout),
                         nn.SiLU() if act else nn.Identity())


class RepVggBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv1, self.conv2 = _cbs(ch, ch, 3, act=False), _cbs(ch, ch, 1, act=False)

    def forward(self, x):
        return F.silu(self.conv1(x) + self.conv2(x))


class CSPRepLayer(nn.Module):
    def __init__(self, cin, cout, blocks=1):
        super().__init__()
        self.conv1, self.conv2 = _cbs(cin, cout), _cbs(cin, cout)
        self.bottlenecks = nn.Sequential(*[RepVggBlock(cout) for _ in range(blocks)])

    def forward(self, x):
        return self.bottlenecks(self.conv1(x)) + self.conv2(x)


def _sincos_2d(w, h, dim, temperature=10000.0):
    gw, gh = torch.meshgrid(torch.arange(w, dtype=torch.float32), torch.arange(h, dtype=torch.float32),
                            indexing="ij")
    pos_dim = dim // 4
    omega = 1.0 / temperature ** (torch.arange(pos_dim, dtype=torch.float32) / pos_dim)
    out_w, out_h = gw.flatten()[..., None] @ omega[None], gh.flatten()[..., None] @ omega[None]
    return torch.cat([out_w.sin(), out_w.cos(), out_h.sin(), out_h.cos()], 1)[None]


class AIFI(nn.Module):
    """nn.TransformerEncoderLayer as RT-DETR's HybridEncoder uses it (post-norm, GELU)."""

    def __init__(self, dim, heads=4, ffn=64):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(dim, heads, ffn, dropout=0.0, activation="gelu", batch_first=True)
        self.dim = dim

    def forward(self, x):
        b, c, h, w = x.shape
        src = x.flatten(2).permute(0, 2, 1)
        pos = _sincos_2d(w, h, self.dim).to(x.dtype)
        q = src + pos
        # the layer's own forward with the position added to query and key only, as DETR does
        attn = self.layer.self_attn(q, q, src, need_weights=False)[0]
        src = self.layer.norm1(src + attn)
        src = self.layer.norm2(src + self.layer.linear2(F.gelu(self.layer.linear1(src))))
        return src.permute(0, 2, 1).reshape(b, c, h, w)


class HybridEncoder(nn.Module):
    def __init__(self, dim=32, classes=8):
        super().__init__()
        self.stem = nn.Sequential(_cbs(3, 16, 3, 2), _cbs(16, 16, 3, 2))
        self.s3, self.s4, self.s5 = _cbs(16, 24, 3, 2), _cbs(24, 32, 3, 2), _cbs(32, 48, 3, 2)
        # input_proj: 1x1 conv + GroupNorm on 4-D maps (DINO / RT-DETR decoder's input projection)
        self.input_proj = nn.ModuleList([nn.Sequential(nn.Conv2d(c, dim, 1, bias=False), nn.GroupNorm(8, dim))
                                         for c in (24, 32, 48)])
        self.aifi = AIFI(dim)
        self.lateral = nn.ModuleList([_cbs(dim, dim) for _ in range(2)])
        self.fpn = nn.ModuleList([CSPRepLayer(2 * dim, dim) for _ in range(2)])
        self.down = nn.ModuleList([_cbs(dim, dim, 3, 2) for _ in range(2)])
        self.pan = nn.ModuleList([CSPRepLayer(2 * dim, dim) for _ in range(2)])
        self.enc_output = nn.Sequential(nn.Linear(dim, dim), nn.LayerNorm(dim))
        self.enc_score_head, self.enc_bbox_head = nn.Linear(dim, classes), nn.Linear(dim, 4)

    def forward(self, images):
        x = self.stem(images)
        c3 = self.s3(x)
        c4 = self.s4(c3)
        c5 = self.s5(c4)
        feats = [p(c) for p, c in zip(self.input_proj, (c3, c4, c5))]
        feats[2] = self.aifi(feats[2])
        inner = [feats[2]]
        for i, idx in enumerate((1, 0)):  # top-down
            high = self.lateral[i](inner[0])
            inner[0] = high
            up = F.interpolate(high, scale_factor=2.0, mode="nearest")
            inner.insert(0, self.fpn[i](torch.cat([up, feats[idx]], 1)))
        outs = [inner[0]]
        for i in range(2):  # bottom-up
            down = self.down[i](outs[-1])
            outs.append(self.pan[i](torch.cat([down, inner[i + 1]], 1)))
        memory = torch.cat([o.flatten(2) for o in outs], 2).permute(0, 2, 1)
        mem = self.enc_output(memory)
        return self.enc_score_head(mem), self.enc_bbox_head(mem).sigmoid()


def rtdetr_encoder() -> Model:
    x = torch.randn(1, 3, 128, 128)
    return Model(_trained_like(HybridEncoder(), x), (x,), ["images"], ["scores", "boxes"])
