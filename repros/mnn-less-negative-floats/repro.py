"""KB110: MNN's float Less (x < y) is wrong wherever both operands are negative: it answers x > y there (the
order of their magnitudes, as if the float bits were compared as signed integers). torch writes Less for
`x < c` and `torch.lt`, and the TorchScript exporter writes nn.Softshrink / nn.Hardshrink as Greater, Less and
Where, so a Softshrink zeroes (or keeps) the wrong negative values."""

import torch
from torch import nn

from kb.blocks import ConvThen, Fc, Fn, randn, seeded
from kb.export import Case

LAMBD = 0.5


def image(seed=1):
    return randn(1, 3, 16, 16, seed=seed)


def net(then, seed=0):
    """Conv2d(3, 8, 3) with seeded weights, then `then` on its output."""
    return seeded(lambda: ConvThen(nn.Conv2d(3, 8, 3, padding=1), then), seed=seed)


def below(t):
    """A mask of the values below -0.5: ONNX Less(t, -0.5)."""
    return (t < -LAMBD).float()


def below_negated(t):
    """The workaround: the same mask as -t > 0.5, a Neg and a Greater (no Less)."""
    return (-t > LAMBD).float()


def above(t):
    """Control: the values above -0.5, ONNX Greater(t, -0.5)."""
    return (t > -LAMBD).float()


class Compare(nn.Module):
    """Two linear heads compared: fc_a(x) < fc_b(x), a Less of two computed tensors."""

    def __init__(self):
        super().__init__()
        self.a, self.b = Fc(12, 16), Fc(12, 16)

    def forward(self, x):
        return (self.a(x) < self.b(x)).float()


class Shrink(nn.Module):
    """nn.Softshrink written without Less: sign(y) * relu(|y| - lambd) (Sign, Abs, Sub, Relu, Mul)."""

    def forward(self, y):
        return torch.sign(y) * torch.relu(y.abs() - LAMBD)


def cases():
    x = image()
    softshrink = net(nn.Softshrink(LAMBD))
    yield Case("softshrink", softshrink, (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("less-mask", net(Fn(below)), (x,), ["x"], ["y"], opset=18, dynamo=True)
    # Control: the same mask the other way round, Greater(t, -0.5).
    yield Case("greater-mask", net(Fn(above)), (x,), ["x"], ["y"], opset=18, dynamo=True,
               trigger=False)
    # Workarounds: the mask as -t > 0.5; Softshrink exported by dynamo (Abs, Greater, Where: no Less) or
    # written as sign(y) * relu(|y| - lambd).
    yield Case("less-mask-negated", net(Fn(below_negated)), (x,), ["x"], ["y"], opset=18,
               dynamo=True, trigger=False, rewrites="less-mask")
    yield Case("softshrink-dynamo", softshrink, (x,), ["x"], ["y"], opset=18, dynamo=True, trigger=False,
               rewrites="softshrink")
    yield Case("softshrink-relu", net(Shrink()), (x,), ["x"], ["y"], opset=17, dynamo=False,
               trigger=False, rewrites="softshrink")


def variants():
    x = image(seed=2)
    tokens = randn(2, 5, 12, seed=2)
    yield Case("hardshrink", net(nn.Hardshrink(LAMBD), seed=3), (x,), ["x"], ["y"], opset=17,
               dynamo=False)
    yield Case("softshrink-opset13", net(nn.Softshrink(LAMBD), seed=3), (x,), ["x"], ["y"],
               opset=13, dynamo=False)
    yield Case("softshrink-onnxsim", net(nn.Softshrink(LAMBD), seed=3), (x,), ["x"], ["y"],
               opset=17, dynamo=False, simplify=True)
    yield Case("softshrink-lambd2", net(nn.Softshrink(2.0), seed=3), (x,), ["x"], ["y"],
               opset=17, dynamo=False)
    yield Case("less-mask-torchscript", net(Fn(below), seed=3), (x,), ["x"], ["y"], opset=17,
               dynamo=False)
    yield Case("less-mask-opset20", net(Fn(below), seed=3), (x,), ["x"], ["y"], opset=20,
               dynamo=True)
    yield Case("clamp-below-where", net(Fn(lambda t: torch.where(t < -1.0, -1.0, t)), seed=3),
               (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("two-heads", seeded(Compare, seed=3), (tokens,), ["x"], ["y"], opset=18, dynamo=True)
    # Near misses: a threshold of 0 or above (both operands are never both negative), Greater and LessOrEqual,
    # a Less on int64, and Hardshrink exported by dynamo (Abs, LessOrEqual, Where).
    yield Case("less-positive-near-miss", net(Fn(lambda t: (t < LAMBD).float()), seed=3),
               (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("greater-near-miss", net(Fn(above), seed=3), (x,), ["x"], ["y"], opset=18,
               dynamo=True)
    yield Case("less-equal-near-miss", net(Fn(lambda t: (t <= -LAMBD).float()), seed=3),
               (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("int64-near-miss", net(Fn(lambda t: ((t * 4).round().long() < -2).float()),
                                         seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("hardshrink-dynamo-near-miss", net(nn.Hardshrink(LAMBD), seed=3), (x,), ["x"],
               ["y"], opset=18, dynamo=True)
