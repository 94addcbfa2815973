"""KB023: pnnx from TorchScript ignores div(rounding_mode='floor'), floors 'trunc', and gives `%` C fmod's sign."""

import torch
from torch import nn

from kb.export import Case

SHAPE = (1, 4, 16)


class Op(nn.Module):
    """One rounding division or remainder, as users write it; `pre` puts ordinary ops before it."""

    def __init__(self, op, divisor=None, pre=False):
        super().__init__()
        self.op, self.divisor, self.pre = op, divisor, pre

    def forward(self, a, b):
        if self.pre:  # ordinary elementwise ops in between, as in index or position arithmetic
            a = a * 3.0 - 1.0
        d = b if self.divisor is None else self.divisor
        if self.op == "floor":
            return torch.div(a, d, rounding_mode="floor")
        if self.op == "trunc":
            return torch.div(a, d, rounding_mode="trunc")
        if self.op == "remainder":
            return a % d
        if self.op == "floordiv":  # Python's // operator: aten::floor_divide
            return a // d
        if self.op == "floor-of-div":  # floor(a / b), written out
            return torch.floor(a / d)
        if self.op == "trunc-of-div":
            return torch.trunc(a / d)
        if self.op == "remainder-written-out":
            return a - torch.floor(a / d) * d
        if self.op == "true-div":
            return a / d
        if self.op == "div-of-floor":
            return torch.floor(a) / d
        if self.op == "mul-floor":
            return torch.floor(a * 0.5)
        raise ValueError(self.op)


def inputs():
    g = torch.Generator().manual_seed(0)
    a = (torch.rand(SHAPE, generator=g) - 0.5) * 20  # about half negative
    sign = torch.where(torch.rand(SHAPE, generator=g) < 0.5, -1.0, 1.0)
    b = sign * (1.0 + torch.rand(SHAPE, generator=g) * 2)  # |b| in [1, 3], either sign
    return a, b


def case(name, model, opset=13, **kw):
    return Case(name, model, inputs(), ["a", "b"], ["y"], opset=opset, dynamo=False, torchscript=True, **kw)


def cases():
    yield case("div-floor", Op("floor"))
    yield case("div-trunc", Op("trunc"))
    yield case("remainder", Op("remainder"))
    # Workarounds: the same operation written another way, fed the same inputs (inputs() is seeded), judged
    # against the original's torch output. Their ONNX export has the same Div -> Floor (or Div -> Cast -> Cast)
    # as the bug cases: ONNX cannot tell how the TorchScript was written, so they are trigger cases too.
    yield case("floordiv-operator", Op("floordiv"), rewrites="div-floor")
    yield case("floor-of-div", Op("floor-of-div"), rewrites="div-floor")
    yield case("remainder-written-out", Op("remainder-written-out"), rewrites="remainder")
    yield case("true-div", Op("true-div"), trigger=False)  # control: no rounding at all


def variants():
    yield case("floor-tensor", Op("floor"))
    yield case("floor-by-const", Op("floor", divisor=-3.0))
    yield case("floor-after-ops", Op("floor", pre=True))
    yield case("trunc-tensor", Op("trunc"))
    yield case("trunc-by-const", Op("trunc", divisor=4.0))
    yield case("remainder-tensor", Op("remainder"))
    yield case("remainder-by-const", Op("remainder", divisor=3.0))
    yield case("remainder-after-ops", Op("remainder", pre=True))
    yield case("plain-div", Op("true-div"))  # near miss
    yield case("div-of-floor", Op("div-of-floor"))  # near miss: Floor before the Div
    yield case("floor-of-half", Op("mul-floor"))  # near miss: no Div
