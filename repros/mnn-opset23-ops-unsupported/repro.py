"""KB199: three standard ONNX ops that torch's dynamo exporter writes at recent opsets and mnnconvert has no rule
for: RMSNormalization (nn.RMSNorm, opset 23 on), Attention (F.scaled_dot_product_attention, opset 23 on) and
GroupNormalization (nn.GroupNorm, opset 21 on). It prints "These Op Not Support: ONNX::<op>", "Converted
Failed!", exits with 0 and writes no model. At opset 20 and below the exporter writes the same layers as
elementary ops, which convert."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import like, randn, seeded
from kb.export import Case


class RMSBlock(nn.Module):
    """A pre-norm MLP step of a token model: RMSNorm, Linear, SiLU, Linear, residual (LLaMA-style)."""

    def __init__(self, d=16, affine=True):
        super().__init__()
        self.norm = nn.RMSNorm(d, elementwise_affine=affine)
        self.up = nn.Linear(d, 32)
        self.down = nn.Linear(32, d)

    def forward(self, x):
        return x + self.down(F.silu(self.up(self.norm(x))))


class AttnBlock(nn.Module):
    """Self-attention over (batch, tokens, features): q, k, v projections, heads, F.scaled_dot_product_attention."""

    def __init__(self, d=16, heads=2, causal=False, masked=False):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.heads, self.causal, self.masked = heads, causal, masked

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        mask = None
        if self.masked:  # a boolean mask hiding the last token
            mask = torch.ones(t, t, dtype=torch.bool)
            mask[:, -1] = False
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=self.causal)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class GNBlock(nn.Module):
    """Conv, GroupNorm, SiLU: the block of diffusion UNets and detection necks."""

    def __init__(self, groups=4, affine=True):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.norm = nn.GroupNorm(groups, 8, affine=affine)

    def forward(self, x):
        return F.silu(self.norm(self.conv(x)))


def tokens(seed=1):
    return randn(2, 5, 16, seed=seed)


def image(seed=1):
    return randn(1, 3, 8, 8, seed=seed)


def cases():
    t, x = tokens(), image()
    rms = seeded(RMSBlock)
    yield Case("rmsnorm", rms, (t,), ["x"], ["y"], opset=23, dynamo=True)
    attn = seeded(AttnBlock)
    yield Case("attention", attn, (t,), ["x"], ["y"], opset=23, dynamo=True)
    gn = seeded(GNBlock)
    yield Case("groupnorm", gn, (x,), ["x"], ["y"], opset=21, dynamo=True)
    # The workaround: the same models (same weights) exported at opset 18, where the exporter writes each layer
    # as elementary ops (Pow/ReduceMean/Sqrt; MatMul/Softmax; Reshape/InstanceNormalization).
    yield Case("rmsnorm-opset18", like(rms, RMSBlock), (t,), ["x"], ["y"], opset=18, dynamo=True, trigger=False,
               rewrites="rmsnorm")
    yield Case("attention-opset18", like(attn, AttnBlock), (t,), ["x"], ["y"], opset=18, dynamo=True,
               trigger=False, rewrites="attention")
    yield Case("groupnorm-opset18", like(gn, GNBlock), (x,), ["x"], ["y"], opset=18, dynamo=True, trigger=False,
               rewrites="groupnorm")


def variants():
    t, x = tokens(), image()
    yield Case("rmsnorm-opset24", seeded(RMSBlock, seed=3), (t,), ["x"], ["y"], opset=24, dynamo=True)
    yield Case("rmsnorm-no-affine", seeded(RMSBlock, seed=3, affine=False), (t,), ["x"], ["y"], opset=23,
               dynamo=True)
    yield Case("attention-causal", seeded(AttnBlock, seed=3, causal=True), (t,), ["x"], ["y"], opset=23,
               dynamo=True)
    yield Case("attention-mask", seeded(AttnBlock, seed=3, masked=True), (t,), ["x"], ["y"], opset=23,
               dynamo=True)
    yield Case("groupnorm-opset23", seeded(GNBlock, seed=3), (x,), ["x"], ["y"], opset=23, dynamo=True)
    yield Case("groupnorm-one-group", seeded(GNBlock, seed=3, groups=1), (x,), ["x"], ["y"], opset=21,
               dynamo=True)
    # Near misses: the same layers at opset 20, where the exporter writes them as elementary ops.
    yield Case("rmsnorm-opset20-near-miss", seeded(RMSBlock, seed=3), (t,), ["x"], ["y"], opset=20, dynamo=True)
    yield Case("attention-opset20-near-miss", seeded(AttnBlock, seed=3), (t,), ["x"], ["y"], opset=20,
               dynamo=True)
    yield Case("groupnorm-opset20-near-miss", seeded(GNBlock, seed=3), (x,), ["x"], ["y"], opset=20, dynamo=True)
