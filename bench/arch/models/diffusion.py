"""Diffusion models: a diffusers UNet with GroupNorm, and VAE-style decoders with a custom op."""

from __future__ import annotations

import math
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from .base import Model, _perturb_norms


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
