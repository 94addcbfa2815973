"""KB022: pnnx from ONNX drops the axes of Reduce ops that take them as an input (ReduceMean/L2/Max... from opset 18)."""

import torch
from torch import nn

from kb.export import Case

SHAPE = (1, 8, 6, 10)


class Reduce(nn.Module):
    """One reduction over the channel axis, as norms, pooling heads and attention use them."""

    def __init__(self, op, dim=1, keepdim=True, pre=False):
        super().__init__()
        self.op, self.dim, self.keepdim, self.pre = op, dim, keepdim, pre

    def forward(self, x):
        if self.pre:  # an ordinary op in between, as in a real block
            x = torch.relu(x) + 0.1
        d, k = self.dim, self.keepdim
        if self.op == "sum":
            return x.sum(dim=d, keepdim=k)
        if self.op == "mean":
            return x.mean(dim=d, keepdim=k)
        if self.op == "norm":
            return torch.linalg.vector_norm(x, ord=2, dim=d, keepdim=k)
        if self.op == "amax":
            return x.amax(dim=d, keepdim=k)
        if self.op == "amin":
            return x.amin(dim=d, keepdim=k)
        if self.op == "normalize":  # F.normalize: x / max(||x||, eps)
            return nn.functional.normalize(x, dim=d)
        if self.op == "softmax":  # near miss: no Reduce op at all
            return torch.softmax(x, dim=d)
        raise ValueError(self.op)


def case(name, model, opset=18, dynamo=False, **kw):
    torch.manual_seed(0)
    return Case(name, model, (torch.randn(*SHAPE),), ["in0"], ["out0"], opset=opset, dynamo=dynamo,
                torchscript=True, **kw)


def cases():
    yield case("mean-opset18", Reduce("mean"))
    yield case("sum-opset18", Reduce("sum"))
    yield case("norm-opset18", Reduce("norm"))
    yield case("amax-opset18", Reduce("amax"))
    # The workaround: the same mean on the same input (case() seeds it), exported at opset 17, where axes is an
    # attribute.
    yield case("mean-opset17", Reduce("mean"), opset=17, trigger=False, rewrites="mean-opset18")


def variants():
    yield case("mean", Reduce("mean"))
    yield case("mean-no-keepdim", Reduce("mean", keepdim=False))
    yield case("mean-last-axis", Reduce("mean", dim=-1))
    yield case("mean-after-relu", Reduce("mean", pre=True))
    yield case("mean-dynamo", Reduce("mean"), dynamo=True)
    yield case("mean-onnxsim", Reduce("mean"), simplify=True)
    yield case("sum", Reduce("sum"))
    yield case("sum-opset13", Reduce("sum"), opset=13)
    yield case("norm", Reduce("norm"))
    yield case("normalize", Reduce("normalize"))
    yield case("amax", Reduce("amax"))
    yield case("amin", Reduce("amin"))
    yield case("mean-spatial", Reduce("mean", dim=(2, 3), keepdim=False))  # a pooling head: x.mean((2, 3))
    yield case("mean-spatial-keepdim", Reduce("mean", dim=(2, 3)))
    yield case("mean-attr-opset17", Reduce("mean"), opset=17)  # near miss: axes is an attribute
    yield case("norm-opset17", Reduce("norm"), opset=17)  # near miss
    yield case("softmax", Reduce("softmax"))  # near miss: no Reduce op
