"""KB026: MNN converts ReduceL2 with its axes as an input (opset 18) wrongly."""

import torch
from torch import nn

from kb.export import Case

SHAPE = (1, 8, 6, 10)


class Reduce(nn.Module):
    def __init__(self, op, dim=1, keepdim=True, pre=False):
        super().__init__()
        self.op, self.dim, self.keepdim, self.pre = op, dim, keepdim, pre

    def forward(self, x):
        if self.pre:
            x = torch.relu(x) + 0.1
        d, k = self.dim, self.keepdim
        if self.op == "norm":
            return torch.linalg.vector_norm(x, ord=2, dim=d, keepdim=k)
        if self.op == "normalize":
            return nn.functional.normalize(x, dim=d)
        if self.op == "l1":
            return torch.linalg.vector_norm(x, ord=1, dim=d, keepdim=k)
        if self.op == "mean":
            return x.mean(dim=d, keepdim=k)
        if self.op == "sum":
            return x.sum(dim=d, keepdim=k)
        if self.op == "amax":
            return x.amax(dim=d, keepdim=k)
        if self.op == "logsumexp":
            return torch.logsumexp(x, dim=d, keepdim=k)
        if self.op == "sqrt-sum-sq":  # the norm written out
            return torch.sqrt((x * x).sum(dim=d, keepdim=k))
        raise ValueError(self.op)


def case(name, model, opset=18, dynamo=False, **kw):
    torch.manual_seed(0)
    return Case(name, model, (torch.randn(*SHAPE),), ["x"], ["y"], opset=opset, dynamo=dynamo, **kw)


def cases():
    yield case("norm-opset18", Reduce("norm"))
    # The workaround: the same function (no weights) on the same input, exported at opset 17 (axes an attribute).
    yield case("norm-opset17", Reduce("norm"), opset=17, trigger=False, rewrites="norm-opset18")


def variants():
    yield case("norm", Reduce("norm"))
    yield case("norm-no-keepdim", Reduce("norm", keepdim=False))
    yield case("norm-last-axis", Reduce("norm", dim=-1))
    yield case("norm-after-relu", Reduce("norm", pre=True))
    yield case("norm-dynamo", Reduce("norm"), dynamo=True)
    yield case("norm-onnxsim", Reduce("norm"), simplify=True)
    yield case("normalize", Reduce("normalize"))
    yield case("l1", Reduce("l1"))
    yield case("logsumexp", Reduce("logsumexp"))
    yield case("mean", Reduce("mean"))
    yield case("sum", Reduce("sum"))
    yield case("amax", Reduce("amax"))
    yield case("norm-attr-opset17", Reduce("norm"), opset=17)  # near miss: axes is an attribute
    yield case("sqrt-sum-sq", Reduce("sqrt-sum-sq"))
