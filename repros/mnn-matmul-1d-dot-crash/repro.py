"""KB182: an ONNX MatMul of two 1-D tensors (a dot product, a scalar result) kills MNN's run (alibaba/MNN#2121
reported a 1-D MatMul crash)."""

import torch
from torch import nn

from kb.blocks import Fn, randn
from kb.export import Case

W = torch.linspace(-1, 1, 64)  # a constant weight vector
M = torch.linspace(-1, 1, 64 * 16).reshape(64, 16)


class Dot(nn.Module):
    """Two inputs, both vectors: a @ b (or torch.dot)."""

    def __init__(self, how="matmul"):
        super().__init__()
        self.how = how

    def forward(self, a, b):
        if self.how == "dot":
            return torch.dot(a, b)
        if self.how == "cosine":
            return (a @ b) / (a.norm() * b.norm())
        return a @ b


class Score(nn.Module):
    """A linear score of a feature vector: relu(x) @ v + b, v a learned vector (a 1-D head)."""

    def __init__(self):
        super().__init__()
        self.v = nn.Parameter(torch.linspace(-0.5, 0.5, 64))
        self.b = nn.Parameter(torch.tensor(0.25))

    def forward(self, x):
        return torch.relu(x) @ self.v + self.b


def cases():
    x = randn(64)
    yield Case("vec-dot-weight", Fn(lambda t: t @ W), (x,), dynamo=False, ways=True)
    # Workaround: make both operands 2-D (a row times a column), then drop the two unit axes.
    yield Case("row-times-column", Fn(lambda t: (t[None, :] @ W[:, None]).reshape(())), (x,), dynamo=False,
               trigger=False, rewrites="vec-dot-weight")
    yield Case("vec-times-matrix", Fn(lambda t: t @ M), (x,), dynamo=False, trigger=False)


def variants():
    a, b = randn(64), randn(64, seed=2)
    yield Case("two-inputs", Dot(), (a, b), ["in0", "in1"], ["out0"], dynamo=False)
    yield Case("torch-dot", Dot("dot"), (a, b), ["in0", "in1"], ["out0"], dynamo=False)

    yield Case("cosine", Dot("cosine"), (a, b), ["in0", "in1"], ["out0"], dynamo=False)
    yield Case("flattened-features", Fn(lambda t: t.flatten() @ W), (randn(1, 4, 4, 4),), dynamo=False)
    yield Case("linear-score", Score(), (a,), dynamo=False)
    yield Case("linear-score-dynamo", Score(), (a,), dynamo=True)
    # Near misses: one operand 2-D (1-D x 2-D, 2-D x 1-D), and an elementwise product summed.
    yield Case("vec-matrix-near-miss", Fn(lambda t: t @ M), (a,), dynamo=False)
    yield Case("matrix-vec-near-miss", Fn(lambda t: M.T @ t), (a,), dynamo=False)
    yield Case("mul-sum-near-miss", Fn(lambda t: (t * W).sum()), (a,), dynamo=False)
