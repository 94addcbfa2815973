"""Audio: a WaveNet-style TCN and a Conformer block.
Held out: written after the trigger patterns were tuned (models.HELD_OUT)."""

from __future__ import annotations

import math

import torch
from torch import nn

from .base import Model, _he_init, _perturb_norms_1d, _trained_like


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
