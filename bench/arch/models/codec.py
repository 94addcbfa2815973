"""Neural audio codecs: an EnCodec-style encoder (weight-normed Conv1d, GroupNorm(1, C) "time_group_norm",
ELU, residual units, a 2-layer LSTM with skip) and a DAC-style encoder (weight-normed Conv1d, Snake).
Held out: written after the trigger patterns were tuned (models.HELD_OUT)."""

from __future__ import annotations

import torch
from torch import nn

from .base import Model, _he_init, _perturb_norms_1d


def _wn(conv: nn.Conv1d) -> nn.Module:
    _he_init(conv)  # before weight_norm splits the weight into g and v
    return nn.utils.parametrizations.weight_norm(conv)


# --------------------------------------------------------------------------------------------------
# EnCodec (facebookresearch/encodec modules/seanet.py SEANetEncoder, norm="time_group_norm" as the
# 48 kHz model): SConv1d = weight-normed Conv1d + GroupNorm(1, C) on (N, C, T); SEANetResnetBlock
# (ELU, k=3 dilated conv, ELU, 1x1 conv, true skip); strided downsampling; SLSTM (2 layers, time first,
# output + input)
# --------------------------------------------------------------------------------------------------


class SConv1d(nn.Module):
    def __init__(self, cin, cout, k, stride=1, dilation=1, norm=True):
        super().__init__()
        pad = (k - 1) * dilation - (stride - 1)
        self.pad = (pad - pad // 2, pad // 2)
        self.conv = _wn(nn.Conv1d(cin, cout, k, stride, dilation=dilation))
        self.norm = nn.GroupNorm(1, cout) if norm else nn.Identity()

    def forward(self, x):
        return self.norm(self.conv(nn.functional.pad(x, self.pad, mode="reflect")))  # EnCodec pad_mode


class SEANetResnetBlock(nn.Module):
    def __init__(self, dim, dilation):
        super().__init__()
        self.block = nn.Sequential(nn.ELU(), SConv1d(dim, dim // 2, 3, dilation=dilation), nn.ELU(),
                                   SConv1d(dim // 2, dim, 1))

    def forward(self, x):
        return x + self.block(x)


class SLSTM(nn.Module):
    def __init__(self, dim, layers=2):
        super().__init__()
        self.lstm = nn.LSTM(dim, dim, layers)

    def forward(self, x):  # (N, C, T) -> time first, as EnCodec
        x = x.permute(2, 0, 1)
        y, _ = self.lstm(x)
        return (y + x).permute(1, 2, 0)


class EncodecEncoder(nn.Module):
    def __init__(self, ch=8, ratios=(2, 4), dim=32):
        super().__init__()
        layers: list[nn.Module] = [SConv1d(1, ch, 7)]
        for r in ratios:
            layers += [SEANetResnetBlock(ch, 1), nn.ELU(), SConv1d(ch, 2 * ch, 2 * r, stride=r)]
            ch *= 2
        layers += [SLSTM(ch), nn.ELU(), SConv1d(ch, dim, 7, norm=False)]
        self.model = nn.Sequential(*layers)

    def forward(self, audio):
        return self.model(audio)


def encodec() -> Model:
    return Model(_perturb_norms_1d(EncodecEncoder()).eval(), (torch.randn(1, 1, 128),), ["audio"], ["emb"])


# --------------------------------------------------------------------------------------------------
# DAC (descriptinc/descript-audio-codec model/dac.py EncoderBlock): WNConv1d, Snake1d
# (x + 1/(alpha + 1e-9) * sin(alpha * x)^2, alpha of shape (1, C, 1)), ResidualUnit (Snake, k=7 dilated
# conv, Snake, 1x1 conv, centre-cropped skip), strided downsampling, no norm layers
# --------------------------------------------------------------------------------------------------


class Snake1d(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.alpha = nn.Parameter(torch.empty(1, ch, 1).uniform_(0.5, 1.5))

    def forward(self, x):
        shape = x.shape
        x = x.reshape(shape[0], shape[1], -1)
        x = x + (self.alpha + 1e-9).reciprocal() * torch.sin(self.alpha * x).pow(2)
        return x.reshape(shape)


class ResidualUnit(nn.Module):
    def __init__(self, dim, dilation):
        super().__init__()
        pad = ((7 - 1) * dilation) // 2
        self.block = nn.Sequential(Snake1d(dim), _wn(nn.Conv1d(dim, dim, 7, dilation=dilation, padding=pad)),
                                   Snake1d(dim), _wn(nn.Conv1d(dim, dim, 1)))

    def forward(self, x):
        y = self.block(x)
        pad = (x.shape[-1] - y.shape[-1]) // 2
        if pad > 0:
            x = x[..., pad:-pad]
        return x + y


class DacEncoder(nn.Module):
    def __init__(self, ch=8, strides=(2, 4), dim=32):
        super().__init__()
        layers: list[nn.Module] = [_wn(nn.Conv1d(1, ch, 7, padding=3))]
        for s in strides:
            layers += [ResidualUnit(ch, 1), ResidualUnit(ch, 3), Snake1d(ch),
                       _wn(nn.Conv1d(ch, 2 * ch, 2 * s, stride=s, padding=(s + 1) // 2))]
            ch *= 2
        layers += [Snake1d(ch), _wn(nn.Conv1d(ch, dim, 3, padding=1))]
        self.block = nn.Sequential(*layers)

    def forward(self, audio):
        return self.block(audio)


def dac() -> Model:
    return Model(DacEncoder().eval(), (torch.randn(1, 1, 128),), ["audio"], ["z"])
