"""known-bug: Tencent/ncnn#4450 -- onnx2ncnn writes ONNX Softmax(axis=-1), what torch exports for softmax(dim=-1)
from opset 13, as ncnn Softmax 0=-2: it subtracts one for the batch axis from a negative axis too, so ncnn
normalizes over the second-to-last axis and the output is wrong (no message)."""

import torch
from torch import nn

from kb.blocks import randn
from kb.export import Case

HEADS, N, D = 2, 6, 4  # heads, tokens, head size
C = HEADS * D


class Softmax(nn.Module):
    """torch.softmax over one dim: dim=-1 is exported as Softmax(axis=-1) from opset 13, as axis=rank-1 before."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.softmax(x, dim=self.dim)


class AttentionProbs(nn.Module):
    """Attention probabilities from (1, heads, tokens, tokens) scores: softmax(scores * scale, dim=-1)."""

    def forward(self, scores):
        return torch.softmax(scores * D ** -0.5, dim=-1)


class Attention3d(nn.Module):
    """Single-head self-attention on (1, tokens, channels): 3-D products, which onnx2ncnn converts correctly
    (ncnn-onnx2ncnn-matmul-4d is about 4-D ones); only the softmax is at stake."""

    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = (nn.Linear(C, C) for _ in range(3))

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        return torch.softmax(q @ k.transpose(1, 2) * C ** -0.5, dim=-1) @ v


class AttentionPool(nn.Module):
    """Attention pooling weights over the length of a (1, channels, length) sequence: Conv1d, then
    nn.Softmax(dim=-1)."""

    def __init__(self):
        super().__init__()
        self.score = nn.Conv1d(C, C, 1)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):
        return self.softmax(self.score(x))


class Classifier(nn.Module):
    """A classifier head: Linear on (1, features), softmax(dim=-1) over the classes. In ncnn the (1, classes)
    tensor is a 1-D blob, and ncnn's Softmax on a 1-D blob ignores the axis."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(C, 10)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=-1)


IO = dict(input_names=["in0"], output_names=["out0"])
X3 = (1, 4, 5)  # (1, rows, features): a 2-D blob in ncnn
SCORES = (1, HEADS, N, N)  # a 3-D blob in ncnn


def cases():
    x = randn(*X3)
    yield Case("softmax-3d", Softmax(-1), (x,), opset=13, dynamo=False, torchscript=True, **IO)
    yield Case("attention-probs", AttentionProbs(), (randn(*SCORES),), opset=13, dynamo=False, **IO)
    # Workarounds, fed the same tensor: a positive dim, and the same module exported at opset 11.
    yield Case("positive-dim", Softmax(2), (x,), opset=13, dynamo=False, trigger=False, rewrites="softmax-3d", **IO)
    yield Case("opset11", Softmax(-1), (x,), opset=11, dynamo=False, trigger=False, rewrites="softmax-3d", **IO)
    # Control on the same path: a classifier's softmax(dim=-1) over a (1, classes) vector.
    torch.manual_seed(7)
    yield Case("classifier", Classifier(), (randn(1, C, seed=7),), opset=13, dynamo=False, trigger=False, **IO)


def variants():
    yield Case("softmax-3d-opset13", Softmax(-1), (randn(*X3, seed=2),), opset=13, dynamo=False, **IO)
    yield Case("softmax-3d-opset17", Softmax(-1), (randn(*X3, seed=2),), opset=17, dynamo=False, **IO)
    yield Case("probs-dynamo", AttentionProbs(), (randn(*SCORES, seed=2),), opset=18, dynamo=True,
               export_kwargs={"external_data": False}, **IO)  # inline weights: not ncnn-onnx2ncnn-external-data
    yield Case("probs-onnxsim", AttentionProbs(), (randn(*SCORES, seed=2),), opset=13, dynamo=False,
               simplify=True, **IO)
    yield Case("dim-minus-2", Softmax(-2), (randn(*SCORES, seed=2),), opset=13, dynamo=False, **IO)
    yield Case("softmax-5d", Softmax(-1), (randn(1, 2, 3, 4, 5, seed=2),), opset=13, dynamo=False, **IO)
    torch.manual_seed(3)
    yield Case("attention-3d", Attention3d(), (randn(1, N, C, seed=3),), opset=13, dynamo=False, **IO)
    torch.manual_seed(4)
    yield Case("attention-pool", AttentionPool(), (randn(1, C, N, seed=4),), opset=17, dynamo=False, **IO)
    # Near misses: a positive dim (channel softmax; the last dim spelled positively), the same
    # softmax(dim=-1) exported at opset 11 (torch writes axis=3), a classifier head over (1, classes).
    yield Case("dim1-near-miss", Softmax(1), (randn(*SCORES, seed=2),), opset=13, dynamo=False, **IO)
    yield Case("dim3-near-miss", Softmax(3), (randn(*SCORES, seed=2),), opset=17, dynamo=False, **IO)
    yield Case("opset11-near-miss", AttentionProbs(), (randn(*SCORES, seed=2),), opset=11, dynamo=False, **IO)
    torch.manual_seed(5)
    yield Case("classifier-near-miss", Classifier(), (randn(1, C, seed=5),), opset=13, dynamo=False, **IO)
