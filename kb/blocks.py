"""Model blocks that several reproducers share, written once: the fp16-range family (KB075 ncnn Vulkan, KB076 ncnn
on ARM, KB077 MNN precision low), whose models are the same and whose engines differ. An entry imports them
from its repro.py; a fix here reaches every entry that runs them."""

import torch
from torch import nn

SCALE = 256.0  # the rescale workaround: a power of two, so dividing and multiplying back are exact
ONE_FILE = {"external_data": False}  # torch 2.13's dynamo exporter otherwise writes the weights beside the model


class L2Norm(nn.Module):
    """The length of each feature vector, as sqrt(sum(x * x)): with features of a few hundred, x * x and the sum
    pass 65504 while the result (about 900) is an ordinary number."""

    def forward(self, x):
        return torch.sqrt((x * x).sum(-1, keepdim=True))


class L2NormRescaled(nn.Module):
    """The same function, with the features divided by SCALE first and the length multiplied back: the squares
    stay under 65504."""

    def forward(self, x):
        y = x / SCALE
        return torch.sqrt((y * y).sum(-1, keepdim=True)) * SCALE


class LinalgNorm(nn.Module):
    def forward(self, x):
        return torch.linalg.vector_norm(x, dim=-1, keepdim=True)


class RMSNorm(nn.Module):
    """LLaMA-style RMSNorm: x / sqrt(mean(x * x) + eps) * weight."""

    def __init__(self, d=64):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * self.weight


class ScaledSoftmax(nn.Module):
    """A classifier head with a logit scale (an inverse temperature): softmax(fc(x) * scale)."""

    def __init__(self, scale):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(16, 16)
        self.scale = scale

    def forward(self, x):
        return torch.softmax(self.fc(x) * self.scale, -1)


class AttentionScores(nn.Module):
    """softmax(q @ k^T / sqrt(d)) with q = k = the features (a non-local / self-similarity block): the product is
    formed before it is scaled down."""

    def forward(self, x):
        return torch.softmax(x @ x.transpose(-1, -2) / 8.0, -1)


class ViTBlock(nn.Module):
    """A pre-norm transformer block (attention and MLP, each with a residual) and the final LayerNorm, as a ViT
    ends. Every weight is nn.Linear's default (|w| < 0.25)."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        torch.manual_seed(0)
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        x = x + self.mlp(self.ln2(x))
        return self.norm(x)


def features(scale, n=8, d=64, seed=1):
    torch.manual_seed(seed)
    return (torch.randn(1, n, d) * scale,)


def residual_stream(massive, n=8, d=32):
    """A residual stream with one "massive activation" channel (as LLMs and large ViTs have): the rest is N(0, 1)."""
    torch.manual_seed(1)
    x = torch.randn(1, n, d)
    x[..., 3] = massive
    return (x,)
