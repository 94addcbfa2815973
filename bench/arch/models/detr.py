"""Detection transformers: a DETR decoder head.
Held out: written after the trigger patterns were tuned (models.HELD_OUT)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .base import Model, _perturb_norms


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
