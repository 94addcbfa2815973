"""KB177: an ONNX MatMul of integer tensors (torch.matmul / @ on int64 or int32 tensors). MNN converts and runs it
without a message, but the product is wrong: all zeros where every input is a small positive integer, other
wrong values otherwise. The same values as float32 multiply right, and so does the integer product written as a
broadcast Mul and a ReduceSum."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case


def ints(*shape, low=-20, high=20, seed=0):
    """Seeded integers in [low, high), int64 as torch makes them."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(low, high, shape, generator=g)


class IntMatMul(nn.Module):
    """x @ y on integer tensors; the product cast to float32 for the comparison."""

    def forward(self, x, y):
        return (x @ y).float()


class FloatMatMul(nn.Module):
    """The workaround: the same product with both operands cast to float32 first (exact while every partial sum
    stays below 2^24)."""

    def forward(self, x, y):
        return x.float() @ y.float()


class MulSum(nn.Module):
    """The workaround for any size of integer: the product as a broadcast Mul and a ReduceSum, in integers."""

    def forward(self, x, y):
        return (x.unsqueeze(-1) * y.unsqueeze(-3)).sum(-2).float()


class FromFloat(nn.Module):
    """Integers made inside the model from float inputs (x * 10 truncated), then multiplied."""

    def __init__(self, dtype=torch.int64):
        super().__init__()
        self.dtype = dtype

    def forward(self, x, y):
        return ((x * 10).to(self.dtype) @ (y * 10).to(self.dtype)).float()


class ConstWeight(nn.Module):
    """An integer input times a constant integer matrix."""

    def __init__(self):
        super().__init__()
        self.register_buffer("w", ints(3, 2, seed=5))

    def forward(self, x):
        return (x @ self.w).float()


class OneHotTable(nn.Module):
    """A lookup written as one_hot(index) @ table, with an integer table."""

    def __init__(self):
        super().__init__()
        self.register_buffer("table", ints(4, 3, low=0, high=9, seed=6))

    def forward(self, i):
        return (F.one_hot(i, 4) @ self.table).float()


def case(name, module, inputs, opset=17, **kw):
    return Case(name, module, inputs, opset=opset, dynamo=False, **kw)


def cases():
    xy = (ints(2, 3, seed=1), ints(3, 4, seed=2))
    yield case("int-matmul", IntMatMul(), xy)
    # Workarounds: the same product through float32, and as a broadcast Mul and a ReduceSum in integers.
    yield case("float-matmul", FloatMatMul(), xy, trigger=False, rewrites="int-matmul")
    yield case("mul-sum", MulSum(), xy, trigger=False, rewrites="int-matmul")


def variants():
    g = torch.Generator().manual_seed(3)
    yield case("opset13", IntMatMul(), (ints(2, 3, seed=7), ints(3, 4, seed=8)), opset=13)
    yield case("positive", IntMatMul(), (ints(2, 3, low=1, seed=9), ints(3, 4, low=1, seed=10)))
    yield case("int32-from-float", FromFloat(torch.int32), (torch.randn(2, 3, generator=g), torch.randn(3, 4, generator=g)))
    yield case("int64-from-float", FromFloat(), (torch.randn(2, 3, generator=g), torch.randn(3, 4, generator=g)))
    yield case("const-weight", ConstWeight(), (ints(2, 3, seed=11),))
    yield case("batched", IntMatMul(), (ints(2, 3, 4, low=0, high=5, seed=12), ints(2, 4, 5, low=0, high=5, seed=13)))
    yield case("matrix-vector", IntMatMul(), (ints(3, 4, low=0, high=5, seed=14), ints(4, low=0, high=5, seed=15)))
    yield case("onehot-table", OneHotTable(), (torch.tensor([0, 3, 1, 2]),))
    # Near misses: the same values multiplied as float32, and as Mul and ReduceSum.
    yield case("float-near-miss", FloatMatMul(), (ints(2, 3, seed=7), ints(3, 4, seed=8)))
    yield case("mul-sum-near-miss", MulSum(), (ints(2, 3, seed=7), ints(3, 4, seed=8)))
