"""KB245: ncnn's SDPA layer (pnnx writes it for F.scaled_dot_product_attention, from TorchScript or from ONNX) forms
Q @ K^T with a Gemm whose alpha is the softmax scale (1/sqrt(head_dim)): with fp16 arithmetic (ARMv8.2) the
unscaled product is summed in fp16 and scaled only after, so a logit whose unscaled value passes 65504 is inf and the
softmax turns its row into NaN, though the scaled logit would fit (for a head of 64 the overflow starts at a scaled
logit of 65504 / 8 = 8188).

The models: the attention alone over (1, 3, 16, 64) inputs of N(0, 1) * 40 (q = k = v: each row's diagonal logit
is 71,000 to 147,000 unscaled, 8,900 to 18,400 scaled), and a ViT laid out as timm's ViT-tiny is (16x16 patch-embed
conv, width 192, 3 heads, MLP 768 with GELU, LayerNorm eps 1e-6, cls token, position embedding; 2 blocks on a 64x64
image so that it runs in seconds under emulation) whose residual stream carries one channel of 300 that block 1's
q and k weights of head 0 read with weight 3 (that head's unscaled logits all about 1.1e5)."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import Fn, randn
from kb.export import Case

IO = dict(input_names=["in0"], output_names=["out0"])


class Attention(nn.Module):
    def __init__(self, dim, heads, fused=True):
        super().__init__()
        self.heads, self.head_dim, self.fused = heads, dim // heads, fused
        self.qkv, self.proj = nn.Linear(dim, dim * 3), nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)
        if self.fused:  # timm's default (fused_attn)
            x = F.scaled_dot_product_attention(q, k, v)
        else:  # timm's other path: q scaled first, then q @ k^T (pnnx: BinaryOp, MatMul, Softmax, MatMul)
            x = ((q * self.head_dim ** -0.5) @ k.transpose(-2, -1)).softmax(-1) @ v
        return self.proj(x.transpose(1, 2).reshape(b, n, c))


class Block(nn.Module):
    def __init__(self, dim, heads, fused):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim, eps=1e-6), Attention(dim, heads, fused)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 4), nn.GELU(), nn.Linear(dim * 4, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    """timm's ViT layout (ViT-tiny's width, heads and MLP), `depth` blocks, a 256-wide head on the cls token. Linear
    weights N(0, 0.02), biases 0, as timm initialises them; `massive` on one channel of the residual stream (a bias
    of block 0's attention projection), and block 1's q and k weights of head 0 read that channel with `qk` (0: left
    as initialised)."""

    def __init__(self, massive=300.0, qk=3.0, fused=True, dim=192, depth=2, heads=3, img=64, patch=16):
        super().__init__()
        torch.manual_seed(0)
        self.patch_embed = nn.Conv2d(3, dim, patch, patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, (img // patch) ** 2 + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*[Block(dim, heads, fused) for _ in range(depth)])
        self.norm, self.head = nn.LayerNorm(dim, eps=1e-6), nn.Linear(dim, 256)
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.Linear):
                    nn.init.trunc_normal_(m.weight, std=0.02)
                    nn.init.zeros_(m.bias)
            self.blocks[0].attn.proj.bias[3] = massive
            if qk:
                self.blocks[1].attn.qkv.weight[0:64, 3] = qk
                self.blocks[1].attn.qkv.weight[dim:dim + 64, 3] = qk

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], 1) + self.pos_embed
        return self.head(self.norm(self.blocks(x))[:, 0])


def sdpa(t):
    return F.scaled_dot_product_attention(t, t, t)


def sdpa_prescaled(t):
    return F.scaled_dot_product_attention(t * 0.125, t, t, scale=1.0)


def cases():
    # The attention alone, traced for pnnx: one SDPA layer (q = k = v), 3 heads of 16 tokens of 64 features of
    # N(0, 1) * 40: each row's diagonal logit is 71,000 to 147,000 unscaled, 8,900 to 18,400 scaled.
    yield Case("sdpa", Fn(sdpa), (randn(1, 3, 16, 64) * 40,), opset=17, dynamo=False, torchscript=True, **IO)
    # Near miss: features of N(0, 1) * 20, unscaled logits under about 3.7e4.
    yield Case("sdpa-in-range", Fn(sdpa), (randn(1, 3, 16, 64) * 20,), opset=17, dynamo=False, torchscript=True,
               trigger=False, **IO)
    # Workaround: q scaled by 1/8 before the SDPA and its scale set to 1 (the same function).
    yield Case("sdpa-prescaled", Fn(sdpa_prescaled), (randn(1, 3, 16, 64) * 40,), opset=17, dynamo=False,
               torchscript=True, rewrites="sdpa", **IO)
    # The ViT, exported to ONNX (opset 17) and converted by pnnx from the ONNX file, as Tencent/ncnn#6932 did.
    yield Case("vit", ViT(), (randn(1, 3, 64, 64),), opset=17, dynamo=False, **IO)
    # Near miss: the same ViT and weights with q @ k^T written out, q scaled first (no SDPA layer).
    yield Case("vit-matmul", ViT(fused=False), (randn(1, 3, 64, 64),), opset=17, dynamo=False, trigger=False, **IO)
    # Near miss: the ViT with the channel of 300 but q and k weights as initialised (logits small).
    yield Case("vit-massive-only", ViT(qk=0.0), (randn(1, 3, 64, 64),), opset=17, dynamo=False, trigger=False, **IO)
