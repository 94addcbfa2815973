"""KB118: MNN runs torch's exact (erf) GELU as its approximate GELU: the TorchScript export's
Div/Erf/Add/Mul/Mul and the ONNX Gelu op (opset 20) both come out up to ~4.7e-4 off."""

import math

import torch
from torch import nn

from kb.blocks import Fn, seeded
from kb.export import Case


def ramp():
    """-6 ... 6 in 96 steps, where exact and approximate GELU differ most near |x| ~ 2."""
    return torch.linspace(-6, 6, 96).reshape(2, 3, 16)


def gelu_reordered(x):
    """The workaround: the same exact GELU, written x * 0.5 * (1 + erf(x / sqrt(2)))."""
    return x * 0.5 * (1 + torch.erf(x / math.sqrt(2)))


class Mlp(nn.Module):
    """A transformer MLP: Linear, GELU, Linear."""

    def __init__(self, act=nn.GELU()):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(16, 32), act, nn.Linear(32, 16)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x) * 3))


def cases():
    x = ramp()
    yield Case("gelu", Fn(nn.functional.gelu), (x,), opset=17, dynamo=False, ways=True)
    yield Case("gelu-reordered", Fn(gelu_reordered), (x,), opset=17, dynamo=False, rewrites="gelu", trigger=False)


def variants():
    x = ramp()
    yield Case("gelu-op-opset20", Fn(nn.functional.gelu), (x,), opset=20, dynamo=True)
    yield Case("mlp", seeded(Mlp), (x,), opset=17, dynamo=False)
    yield Case("mlp-opset20", seeded(Mlp), (x,), opset=20, dynamo=True)
    # near misses: the tanh GELU, and the reordered exact one
    yield Case("gelu-tanh", Fn(lambda t: nn.functional.gelu(t, approximate="tanh")), (x,), opset=17, dynamo=False)
    yield Case("gelu-tanh-opset20", Fn(lambda t: nn.functional.gelu(t, approximate="tanh")), (x,), opset=20,
               dynamo=True)
    yield Case("mlp-reordered", seeded(Mlp, act=Fn(gelu_reordered)), (x,), opset=17, dynamo=False)
