"""known-bug: Tencent/ncnn#2194 -- onnx2ncnn writes a MatMul of two activations as an ncnn Gemm, and ncnn's Gemm
multiplies 2-D matrices only: q @ k.transpose(-2, -1) on 4-D (batch, heads, tokens, dim) tensors gives one
[heads, tokens] plane instead of heads x tokens x tokens."""

import torch
from torch import nn

from kb.blocks import Fc
from kb.export import Case

HEADS, N, D = 2, 6, 4  # heads, tokens, head size
C = HEADS * D


class Scores(nn.Module):
    """Attention scores: q @ k^T over the last two axes (k.transpose(-2, -1) is a 4-D Transpose)."""

    def forward(self, q, k):
        return q @ k.transpose(-2, -1)


class Core(nn.Module):
    """The attention core on (1, heads, tokens, dim) inputs: softmax(q @ k^T * scale) @ v.
    softmax is over dim=3, not -1: onnx2ncnn a4d2ea1 also writes Softmax(axis=-1) with the wrong axis,
    a separate bug this entry keeps out of its measurements."""

    def forward(self, q, k, v):
        return torch.softmax(q @ k.transpose(-2, -1) * D ** -0.5, dim=3) @ v


class PerHead(nn.Module):
    """The workaround: the same core one head at a time, as 3-D (1, tokens, dim) products, then concatenated.
    x[:, i:i + 1] is a Slice on the heads axis and the reshape keeps a leading 1, both of which onnx2ncnn
    converts."""

    def forward(self, q, k, v):
        outs = []
        for i in range(q.shape[1]):
            qi, ki, vi = (t[:, i:i + 1].reshape(1, N, D) for t in (q, k, v))
            a = torch.softmax(qi @ ki.transpose(1, 2) * D ** -0.5, dim=2)
            outs.append((a @ vi).reshape(1, 1, N, D))
        return torch.cat(outs, 1)


class Values(nn.Module):
    """attn @ v where v is split into heads by permute(0, 2, 1, 3) of (1, tokens, heads, dim)."""

    def forward(self, a, x):
        return a @ x.permute(0, 2, 1, 3)


class ScaledScores(nn.Module):
    """q @ (k^T * scale): a Mul between the Transpose and the MatMul."""

    def forward(self, q, k):
        return q @ (k.transpose(-2, -1) * D ** -0.5)


class Attention(nn.Module):
    """A transformer self-attention block: Linear q, k, v, split into heads, scores, softmax, @ v, merge, Linear."""

    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.proj = (nn.Linear(C, C) for _ in range(4))

    def forward(self, x):
        q, k, v = (f(x).reshape(1, N, HEADS, D).permute(0, 2, 1, 3) for f in (self.q, self.k, self.v))
        a = torch.softmax(q @ k.transpose(-2, -1) * D ** -0.5, dim=3)  # dim=3: see Core
        return self.proj((a @ v).permute(0, 2, 1, 3).reshape(1, N, C))


class Scores3d(nn.Module):
    """Near miss: single-head scores on 3-D (1, tokens, dim) tensors."""

    def forward(self, q, k):
        return q @ k.transpose(1, 2)


class Mm2d(nn.Module):
    """Near miss: torch.mm of two 2-D activations (Tencent/ncnn#2194's case, converted to Gemm since 2020)."""

    def forward(self, a, b):
        return a @ b


def qkv(seed=1, n=3, shape=(1, HEADS, N, D)):
    torch.manual_seed(seed)
    return tuple(torch.randn(*shape) for _ in range(n))


def io(n):
    return dict(input_names=[f"in{i}" for i in range(n)], output_names=["out0"])


def cases():
    yield Case("scores", Scores(), qkv(n=2), opset=13, dynamo=False, torchscript=True, **io(2))
    yield Case("attention-core", Core(), qkv(), opset=13, dynamo=False, torchscript=True, **io(3))
    yield Case("per-head", PerHead(), qkv(), opset=13, dynamo=False, trigger=False, rewrites="attention-core", **io(3))
    # Control on the same path: the same scores on 3-D single-head tensors.
    yield Case("scores-3d", Scores3d(), qkv(n=2, shape=(1, N, D)), opset=13, dynamo=False, trigger=False, **io(2))


def variants():
    yield Case("scores-opset13", Scores(), qkv(2, 2), opset=13, dynamo=False, **io(2))
    yield Case("scores-opset17", Scores(), qkv(2, 2), opset=17, dynamo=False, **io(2))
    yield Case("scores-dynamo", Scores(), qkv(2, 2), opset=18, dynamo=True,
               export_kwargs={"external_data": False}, **io(2))  # inline weights: not ncnn-onnx2ncnn-external-data
    yield Case("scores-onnxsim", Scores(), qkv(2, 2), opset=13, dynamo=False, simplify=True, **io(2))
    yield Case("single-head", Scores(), qkv(2, 2, (1, 1, N, D)), opset=13, dynamo=False, **io(2))
    yield Case("scaled-scores", ScaledScores(), qkv(2, 2), opset=13, dynamo=False, **io(2))
    torch.manual_seed(3)
    yield Case("values", Values(), (torch.randn(1, HEADS, N, N), torch.randn(1, N, HEADS, D)), opset=13,
               dynamo=False, **io(2))
    yield Case("core-opset17", Core(), qkv(2), opset=17, dynamo=False, **io(3))
    torch.manual_seed(4)
    yield Case("attention-block", Attention(), (torch.randn(1, N, C),), opset=13, dynamo=False, **io(1))
    # Near misses: 3-D single-head scores, a Linear on 3-D tokens, torch.mm of two 2-D activations.
    yield Case("scores-3d-near-miss", Scores3d(), qkv(2, 2, (1, N, D)), opset=13, dynamo=False, **io(2))
    torch.manual_seed(5)
    yield Case("linear-3d-near-miss", Fc(C, C), (torch.randn(1, N, C),), opset=13, dynamo=False, **io(1))
    yield Case("mm-2d-near-miss", Mm2d(), (torch.randn(N, D), torch.randn(D, 3)), opset=13, dynamo=False, **io(2))
