"""known-bug: F.normalize over an axis that is not the channel axis (the last axis of (1, N, C) tokens, H or W of
a feature map): pnnx prints "unsupported normalize for 2-rank tensor with axis 1" and still writes an ncnn
Normalize across channels, so ncnn returns values that are not torch's (+-1 where each channel holds one value)."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import seeded
from kb.export import Case


class Tokens(nn.Module):
    """A patch embedding (Conv2d, flatten, transpose) to (1, N, C) tokens, then an L2 normalize over `dim`.

    how="normalize": F.normalize (the bug); how="norm": the same written as t / t.norm().clamp() (the workaround).
    """

    def __init__(self, dim=-1, how="normalize"):
        super().__init__()
        self.embed = nn.Conv2d(3, 16, 4, stride=4)
        self.dim, self.how = dim, how

    def forward(self, x):
        t = self.embed(x).flatten(2).transpose(1, 2)
        if self.how == "norm":
            return t / t.norm(dim=self.dim, keepdim=True).clamp(min=1e-12)
        return F.normalize(t, dim=self.dim)


class FeatureMap(nn.Module):
    """A Conv2d, then F.normalize over `dim` of the 4-D feature map (dim=1 is the channel axis)."""

    def __init__(self, dim):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.dim = dim

    def forward(self, x):
        return F.normalize(self.conv(x), dim=self.dim)


class CosineAttention(nn.Module):
    """Cosine attention scores as in Swin V2: q and k L2-normalized over the head dim, then q @ k^T."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Conv2d(3, 16, 4, stride=4)
        self.q = nn.Linear(16, 16)
        self.k = nn.Linear(16, 16)

    def forward(self, x):
        t = self.embed(x).flatten(2).transpose(1, 2)
        q = F.normalize(self.q(t), dim=-1)
        k = F.normalize(self.k(t), dim=-1)
        return q @ k.transpose(1, 2)


class LinearTokens(nn.Module):
    """A Linear on a (1, N, C) model input, then F.normalize over the last axis (a text or point embedding)."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        return F.normalize(self.proj(x), dim=-1)


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, 3, 16, 16)
    io = dict(input_names=["in0"], output_names=["out0"])
    model = seeded(lambda: Tokens(-1))
    yield Case("tokens-normalize", model, (x,), opset=17, dynamo=False, torchscript=True, **io)
    # The workaround: the same weights, the norm written out (ReduceL2, Clip, Div: no F.normalize for pnnx to fuse).
    written = seeded(lambda: Tokens(-1, how="norm"))
    yield Case("tokens-norm-written", written, (x,), opset=17, dynamo=False, torchscript=True, trigger=False,
               rewrites="tokens-normalize", **io)
    # Control: F.normalize over the channel axis of a conv's output, which pnnx converts.
    yield Case("channel-normalize", seeded(lambda: FeatureMap(1)), (x,), opset=17, dynamo=False, torchscript=True,
               trigger=False, **io)


def variant(name, module, x, opset=17, dynamo=False, **kw):
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    torch.manual_seed(1)
    x = torch.randn(1, 3, 16, 16)
    seq = torch.randn(1, 12, 16)
    tokens = seeded(lambda: Tokens(-1))
    yield variant("tokens-opset13", tokens, x, opset=13)
    yield variant("tokens-opset17", tokens, x)
    yield variant("tokens-opset18", tokens, x, opset=18)
    yield variant("tokens-dynamo", tokens, x, opset=18, dynamo=True, export_kwargs={"external_data": False})
    yield variant("tokens-onnxsim", tokens, x, simplify=True)
    yield variant("featuremap-dim2", seeded(lambda: FeatureMap(2)), x)
    yield variant("featuremap-dim-1", seeded(lambda: FeatureMap(-1)), x)
    yield variant("cosine-attention", seeded(lambda: CosineAttention()), x)
    yield variant("linear-tokens", seeded(lambda: LinearTokens()), seq)
    # Near misses: the channel axis of a feature map, and the written-out norm, both converted correctly.
    yield variant("featuremap-dim1-near-miss", seeded(lambda: FeatureMap(1)), x)
    yield variant("tokens-norm-written-near-miss", seeded(lambda: Tokens(-1, how="norm")), x)
