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


# --------------------------------------------------------------------------------------------------
# GPT-NeoX block (transformers GPTNeoXLayer, use_parallel_residual=True, rotary_pct=0.25): nn.LayerNorm,
# one fused query_key_value Linear viewed as (B, S, H, 3 * hd), partial rotary on the first quarter of
# each head, a causal mask by torch.where on a bool buffer with finfo.min, fp32 softmax, GELU MLP,
# x + attn(ln1(x)) + mlp(ln2(x)); final LayerNorm
# --------------------------------------------------------------------------------------------------


class GPTNeoXLayer(nn.Module):
    def __init__(self, dim=64, heads=4, seq=16, rotary_pct=0.25):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.rot = int(self.hd * rotary_pct)
        self.input_layernorm, self.post_attention_layernorm = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.query_key_value, self.dense = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.dense_h_to_4h, self.dense_4h_to_h = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        inv = 1.0 / (10000 ** (torch.arange(0, self.rot, 2).float() / self.rot))
        emb = torch.cat([torch.outer(torch.arange(seq).float(), inv)] * 2, -1)
        self.register_buffer("cos", emb.cos()[None, None], persistent=False)
        self.register_buffer("sin", emb.sin()[None, None], persistent=False)
        self.register_buffer("bias", torch.tril(torch.ones(seq, seq, dtype=torch.bool))[None, None], persistent=False)

    def attention(self, x):
        B, S, D = x.shape
        qkv = self.query_key_value(x).view(B, S, self.heads, 3 * self.hd).permute(0, 2, 1, 3)
        q, k, v = qkv[..., : self.hd], qkv[..., self.hd: 2 * self.hd], qkv[..., 2 * self.hd:]
        q_rot, q_pass = q[..., : self.rot], q[..., self.rot:]
        k_rot, k_pass = k[..., : self.rot], k[..., self.rot:]
        q = torch.cat((q_rot * self.cos + rotate_half(q_rot) * self.sin, q_pass), dim=-1)
        k = torch.cat((k_rot * self.cos + rotate_half(k_rot) * self.sin, k_pass), dim=-1)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd)
        scores = torch.where(self.bias[:, :, :S, :S], scores, torch.finfo(scores.dtype).min)
        probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(v.dtype)
        return self.dense(torch.matmul(probs, v).transpose(1, 2).reshape(B, S, D))

    def forward(self, h):
        mlp = self.dense_4h_to_h(F.gelu(self.dense_h_to_4h(self.post_attention_layernorm(h))))
        return h + self.attention(self.input_layernorm(h)) + mlp


class TinyNeoX(nn.Module):
    def __init__(self, dim=64, layers=2):
        super().__init__()
        self.layers = nn.Sequential(*[GPTNeoXLayer(dim) for _ in range(layers)])
        self.final_layer_norm = nn.LayerNorm(dim)

    def forward(self, inputs_embeds):
        return self.final_layer_norm(self.layers(inputs_embeds))


def gpt_neox() -> Model:
    return Model(_perturb_norms(TinyNeoX()), (torch.randn(1, 16, 64),), ["inputs_embeds"], ["hidden_states"])
