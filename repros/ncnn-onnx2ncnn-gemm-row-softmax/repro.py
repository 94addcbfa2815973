"""KB196: torch.addmm (or torch.mm) at batch 1, then softmax over dim 1. onnx2ncnn writes the Gemm as ncnn's Gemm
layer, whose output keeps the row as a 2-D (1, N) blob, and writes the softmax's axis 1 as ncnn axis 0, which on
that blob is the row axis of size 1: every probability comes out 1.0."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

K, N = 7, 2  # a row of 7 (no multiple of 4: not KB080's packed row), two classes


class Head(nn.Module):
    """A classifier head that keeps its weight as (in, out) and multiplies with torch.addmm, then a softmax."""

    def __init__(self, k=K, n=N, op="addmm", act="softmax"):
        super().__init__()
        self.w, self.b = nn.Parameter(torch.randn(k, n)), nn.Parameter(torch.randn(n))
        self.op, self.act = op, act

    def forward(self, x):
        if self.op == "mm":
            y = torch.mm(x, self.w)
        elif self.op == "linear-t":
            y = nn.functional.linear(x, self.w.t(), self.b)
        else:
            y = torch.addmm(self.b, x, self.w)
        if self.act == "sigmoid":
            return torch.sigmoid(y)
        return torch.softmax(y, 1)


class LinearHead(nn.Module):
    """The workaround: the same weights in nn.Linear (weight = w.t()), which onnx2ncnn writes as an InnerProduct."""

    def __init__(self, head: Head):
        super().__init__()
        self.fc = nn.Linear(head.w.shape[0], head.w.shape[1])
        with torch.no_grad():
            self.fc.weight.copy_(head.w.t())
            self.fc.bias.copy_(head.b)

    def forward(self, x):
        return torch.softmax(self.fc(x), 1)


def cases():
    head = seeded(Head)
    x = randn(1, K)
    yield Case("addmm-softmax", head, (x,), opset=13, dynamo=False, ways=True)
    yield Case("as-linear", LinearHead(head), (x,), opset=13, dynamo=False, trigger=False, rewrites="addmm-softmax")


def variants():
    x = randn(1, K, seed=2)
    yield Case("mm-softmax", seeded(Head, op="mm"), (x,), opset=13, dynamo=False)
    yield Case("linear-t-softmax", seeded(Head, op="linear-t"), (x,), opset=13, dynamo=False)
    yield Case("addmm-k5-classes10", seeded(Head, k=5, n=10), (randn(1, 5, seed=2),), opset=13, dynamo=False)
    # Near misses: an elementwise op after the Gemm; nn.Linear (an InnerProduct, 1-D output).
    yield Case("addmm-sigmoid-near-miss", seeded(Head, act="sigmoid"), (x,), opset=13, dynamo=False)
    yield Case("linear-near-miss", LinearHead(seeded(Head)), (x,), opset=13, dynamo=False)
