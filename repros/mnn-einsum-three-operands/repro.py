"""KB010: an Einsum with three operands, converted to MNN."""

import torch
from torch import nn

from kb.export import Case


class Three(nn.Module):
    """A bilinear form: einsum over three operands in one call, as attention and bilinear layers write it."""

    def __init__(self, eq="bi,ij,bj->b", split=False, permute=False, act=None, weight=False):
        super().__init__()
        self.eq, self.split, self.permute, self.act = eq, split, permute, act
        self.w = nn.Parameter(torch.randn(8, 8) * 0.3) if weight else None

    def forward(self, a, b, c=None):
        if self.act == "relu":
            a = torch.relu(a)
        elif self.act == "tanh":
            a = torch.tanh(a)
        if self.w is not None:  # the middle operand is a weight: only two model inputs
            b, c = self.w, b
        if self.permute:  # the workaround: (a @ W) * c summed over j, as matmul
            return ((a @ b) * c).sum(-1)
        if self.split:  # two einsums of two operands each
            return torch.einsum("bj,bj->b", torch.einsum("bi,ij->bj", a, b), c)
        return torch.einsum(self.eq, a, b, c)


class Outer(nn.Module):
    """Three operands with an output of three free indices (an outer product of three vectors)."""

    def __init__(self, permute=False):
        super().__init__()
        self.permute = permute

    def forward(self, a, b, c):
        if self.permute:
            return (a[:, :, None, None] * b[:, None, :, None]) * c[:, None, None, :]
        return torch.einsum("bi,bj,bk->bijk", a, b, c)


class Batched(nn.Module):
    """Three batched matrices: bik,bkl,blj->bij."""

    def __init__(self, permute=False):
        super().__init__()
        self.permute = permute

    def forward(self, a, b, c):
        if self.permute:
            return torch.matmul(torch.matmul(a, b), c)
        return torch.einsum("bik,bkl,blj->bij", a, b, c)


def vec(n=3):
    torch.manual_seed(0)
    return tuple(torch.randn(2, 8) for _ in range(n))


def mats():
    torch.manual_seed(0)
    return torch.randn(2, 4, 5), torch.randn(2, 5, 6), torch.randn(2, 6, 3)


def bilinear_inputs():
    torch.manual_seed(0)
    return torch.randn(2, 8), torch.randn(8, 8), torch.randn(2, 8)


def case(name, model, inputs, opset=13, dynamo=False, **kw):
    names = ["a", "b", "c"][: len(inputs)]
    return Case(name, model, inputs, names, ["y"], opset=opset, dynamo=dynamo, **kw)


def cases():
    torch.manual_seed(0)
    yield case("bilinear", Three(), bilinear_inputs())
    # The workarounds: the same products on the same inputs (no weights), rewritten with two operands at a time.
    yield case("split-two-einsums", Three(split=True), bilinear_inputs(), trigger=False, rewrites="bilinear")
    yield case("matmul", Three(permute=True), bilinear_inputs(), trigger=False, rewrites="bilinear")
    yield case("batched-matmul", Batched(permute=True), mats(), trigger=False, rewrites="batched-chain")


def variants():
    torch.manual_seed(0)
    yield case("batched-chain", Batched(), mats())
    yield case("outer-product", Outer(), vec())
    yield case("weight-operand", Three(weight=True), vec(2))
    yield case("relu-before", Three(act="relu"), bilinear_inputs())
    yield case("tanh-before", Three(act="tanh"), bilinear_inputs())
    yield case("opset17", Three(), bilinear_inputs(), opset=17)
    yield case("onnxsim", Three(act="relu"), bilinear_inputs(), simplify=True)
    yield case("dynamo", Three(), bilinear_inputs(), opset=18, dynamo=True)
    yield case("two-operands-near-miss", Three(split=True), bilinear_inputs())
    yield case("matmul-near-miss", Batched(permute=True), mats())
