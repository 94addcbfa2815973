"""KB067: onnxsim fuses a hand-written self-attention into onnxruntime's contrib op com.microsoft:Attention.

The export itself is plain ONNX (MatMul, Reshape, Transpose, Softmax); the contrib op appears only after
onnxsim (Case(simplify=True)), whose fuse_attention pass matches the BERT-style pattern: separate q, k, v
Linear layers on one input, head split, scaled Q @ K^T, Softmax, @ V, head merge.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case

D, H = 32, 4


class SelfAttention(nn.Module):
    """The way transformers' BertSelfAttention (and most from-scratch attention code) writes it."""

    def __init__(self, bias=True, scale="div", mask=False, cross=False, sdpa=False):
        super().__init__()
        self.q, self.k, self.v = (nn.Linear(D, D, bias=bias) for _ in range(3))
        self.o = nn.Linear(D, D)
        self.scale, self.mask, self.cross, self.sdpa = scale, mask, cross, sdpa

    def forward(self, x, *extra):
        b, n, _ = x.shape
        kv = extra[0] if self.cross else x
        heads = lambda t: t.view(b, -1, H, D // H).transpose(1, 2)  # noqa: E731
        q, k, v = heads(self.q(x)), heads(self.k(kv)), heads(self.v(kv))
        if self.sdpa:
            y = F.scaled_dot_product_attention(q, k, v)
        else:
            a = q @ k.transpose(-1, -2)
            a = a / math.sqrt(D // H) if self.scale == "div" else a * (1 / math.sqrt(D // H))
            if self.mask:
                a = a + extra[0]
            y = a.softmax(-1) @ v
        return self.o(y.transpose(1, 2).reshape(b, n, D))


class BertLayer(nn.Module):
    """A post-norm encoder layer (BERT): attention, residual, LayerNorm, GELU MLP, residual, LayerNorm."""

    def __init__(self):
        super().__init__()
        self.att, self.ln1 = SelfAttention(), nn.LayerNorm(D)
        self.ff, self.ln2 = nn.Sequential(nn.Linear(D, 64), nn.GELU(), nn.Linear(64, D)), nn.LayerNorm(D)

    def forward(self, x):
        x = self.ln1(x + self.att(x))
        return self.ln2(x + self.ff(x))


class PreNorm(nn.Module):
    """A pre-norm block (ViT, GPT): LayerNorm feeds only q, k, v, and onnxsim merges the three projections
    into one MatMul + Split before fuse_attention looks, so nothing is fused."""

    def __init__(self):
        super().__init__()
        self.ln, self.att = nn.LayerNorm(D), SelfAttention()

    def forward(self, x):
        return x + self.att(self.ln(x))


class TorchMHA(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.MultiheadAttention(D, H, batch_first=True)

    def forward(self, x):
        return self.m(x, x, x, need_weights=False)[0]


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, 8, D)
    net = SelfAttention()
    yield Case("attention", net, (x,), opset=13, dynamo=False, simplify=True, **IO)
    # The workarounds' model: the same module and input, exported without onnxsim (the checks also run
    # onnxsim on it with fuse_attention skipped); pnnx reads its TorchScript.
    yield Case("attention-plain", net, (x,), opset=13, dynamo=False, trigger=False, torchscript=True,
               rewrites="attention", **IO)
    # Control: an additive attention mask; onnxsim leaves the plain ops, and every converter takes them.
    yield Case("masked-attention", SelfAttention(mask=True), (x, torch.zeros(1, 1, 8, 8)), opset=13,
               dynamo=False, simplify=True, trigger=False, input_names=["in0", "in1"], output_names=["out0"])


def variants():
    torch.manual_seed(0)
    x = torch.randn(1, 8, D)
    yield Case("v-opset13", SelfAttention(), (x,), opset=13, dynamo=False, simplify=True, **IO)
    yield Case("v-opset17", SelfAttention(), (x,), opset=17, dynamo=False, simplify=True, **IO)
    yield Case("v-opset18-dynamo", SelfAttention(), (x,), opset=18, dynamo=True, simplify=True, **IO)
    yield Case("v-no-bias", SelfAttention(bias=False), (x,), opset=13, dynamo=False, simplify=True, **IO)
    yield Case("v-scale-mul", SelfAttention(scale="mul"), (x,), opset=13, dynamo=False, simplify=True, **IO)
    yield Case("v-sdpa", SelfAttention(sdpa=True), (x,), opset=17, dynamo=False, simplify=True, **IO)
    yield Case("v-batch2", SelfAttention(), (torch.randn(2, 8, D),), opset=13, dynamo=False, simplify=True, **IO)
    yield Case("v-bert-layer", BertLayer(), (x,), opset=17, dynamo=False, simplify=True, **IO)
    yield Case("v-bert-layer-dynamo", BertLayer(), (x,), opset=18, dynamo=True, simplify=True, **IO)
    # Near misses: no contrib op in the file, so nothing to reject.
    yield Case("v-no-onnxsim", BertLayer(), (x,), opset=17, dynamo=False, **IO)
    yield Case("v-masked", SelfAttention(mask=True), (x, torch.zeros(1, 1, 8, 8)), opset=13, dynamo=False,
               simplify=True, input_names=["in0", "in1"], output_names=["out0"])
    yield Case("v-cross-attention", SelfAttention(cross=True), (x, torch.randn(1, 6, D)), opset=13, dynamo=False,
               simplify=True, input_names=["in0", "in1"], output_names=["out0"])
    yield Case("v-pre-norm", PreNorm(), (x,), opset=17, dynamo=False, simplify=True, **IO)
    yield Case("v-torch-mha", TorchMHA(), (x,), opset=17, dynamo=True, simplify=True, **IO)
