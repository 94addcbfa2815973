"""Language-model blocks: LLaMA (RMSNorm, RoPE, causal attention, SwiGLU) and a T5 feed-forward stack."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .base import Model, _perturb_norms


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
